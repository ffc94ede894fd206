"""ledger: plain-text bookkeeping."""

from ledger.money import Money
from ledger.transactions import Posting, Transaction

__all__ = ["Money", "Posting", "Transaction"]
__version__ = "0.4.1"
