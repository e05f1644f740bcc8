"""A month of showback as a FOCUS dataset (the FinOps Open Cost and Usage Specification,
version 1.2), pure: no database. tenants.selectors.focus reads the month and who may see
which tenant; this package makes the rows and writes them.

columns  the columns (name, data type, nullability, as the specification gives them), the
         service, the SKUs (one per price of a cluster's price list) and the tags
rows     a month's pieces and adjustments as rows, a tuple of cells per row
files    the rows as CSV (RFC 4180) or as a JSON array of objects, a chunk at a time

One row per price of a piece (tenants.charging.Piece: a namespace holding one quota at one
set of its cluster's prices for a stretch of the month): its CPU cores in core-hours, its
memory in GiB-hours, its storage in GiB-months and the namespace itself in
namespace-months, each at the price the cluster's price list gives for that unit, so that
ListUnitPrice × PricingQuantity = ListCost on every row; a piece asleep (hibernation) has
its CPU and memory at the asleep prices of the list (their own SkuPriceId). A quantity of
nothing (no storage) makes no row. Each adjustment of a closed month is one more row (ChargeCategory
Adjustment, ChargeClass Correction: the month was closed, then corrected).

Berth gives no discounts and has no negotiated prices: BilledCost, EffectiveCost,
ContractedCost and ListCost are one amount.
"""

from tenants.focus.columns import COLUMNS, NAMES, VERSION, Column
from tenants.focus.files import csv_chunks, json_chunks
from tenants.focus.rows import Account, Row, number, rows

__all__ = [
    "COLUMNS",
    "NAMES",
    "VERSION",
    "Account",
    "Column",
    "Row",
    "csv_chunks",
    "json_chunks",
    "number",
    "rows",
]
