"""The MutMem V2 verifiers' checks, split by the reference's check order: ``recall_*`` for the
recall-disclosure envelope (entry point :mod:`aimos.verify.v2_recall`), ``mutation_*`` for the
mutation-outcome evidence (entry point :mod:`aimos.verify.v2_mutation`)."""
