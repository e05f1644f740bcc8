"""The columns of Berth's FOCUS 1.2 dataset as the specification defines them, and what
Berth puts in the ones that name what it sells: the service, its SKUs, its tags."""

from __future__ import annotations

from dataclasses import dataclass

VERSION = "1.2"

DECIMAL, STRING, DATETIME, JSON = "Decimal", "String", "Date/Time", "JSON"


@dataclass(frozen=True)
class Column:
    name: str  # the specification's Column ID
    kind: str  # its data type
    nullable: bool  # its "Allows nulls"


# FOCUS's columns in alphabetical order (the specification allows it): the mandatory ones
# and those whose condition Berth meets (it charges provisioned resources, has a sub
# account per tenant, its own tags and published price lists); not those of discounts,
# commitments, regions, invoices or measured consumption, which Berth does not have.
COLUMNS: tuple[Column, ...] = (
    Column("BilledCost", DECIMAL, False),
    Column("BillingAccountId", STRING, False),
    Column("BillingAccountName", STRING, True),
    Column("BillingCurrency", STRING, False),
    Column("BillingPeriodEnd", DATETIME, False),
    Column("BillingPeriodStart", DATETIME, False),
    Column("ChargeCategory", STRING, False),
    Column("ChargeClass", STRING, True),
    Column("ChargeDescription", STRING, True),
    Column("ChargeFrequency", STRING, False),
    Column("ChargePeriodEnd", DATETIME, False),
    Column("ChargePeriodStart", DATETIME, False),
    Column("ContractedCost", DECIMAL, False),
    Column("EffectiveCost", DECIMAL, False),
    Column("InvoiceIssuerName", STRING, False),
    Column("ListCost", DECIMAL, False),
    Column("ListUnitPrice", DECIMAL, True),
    Column("PricingQuantity", DECIMAL, True),
    Column("PricingUnit", STRING, True),
    Column("ProviderName", STRING, False),
    Column("PublisherName", STRING, False),
    Column("ResourceId", STRING, True),
    Column("ResourceName", STRING, True),
    Column("ResourceType", STRING, True),
    Column("ServiceCategory", STRING, False),
    Column("ServiceName", STRING, False),
    Column("ServiceSubcategory", STRING, False),
    Column("SkuId", STRING, True),
    Column("SkuMeter", STRING, True),
    Column("SkuPriceDetails", JSON, True),
    Column("SkuPriceId", STRING, True),
    Column("SubAccountId", STRING, True),
    Column("SubAccountName", STRING, True),
    Column("Tags", JSON, True),
)
NAMES = tuple(column.name for column in COLUMNS)

SERVICE_NAME = "Kubernetes namespace quota"
SERVICE_CATEGORY = "Compute"  # "virtual, containerized, serverless ... computing"
SERVICE_SUBCATEGORY = "Containers"  # of Compute
RESOURCE_TYPE = "Kubernetes namespace"
# Berth's tags are provider-defined: prefixed as the labels it sets on its namespaces.
TAG_PREFIX = "berth.dev/"


@dataclass(frozen=True)
class Sku:
    """What one price of a cluster's price list charges for, in its unit."""

    price_field: str  # tenants.pricing.PRICE_FIELDS
    sku_id: str
    meter: str
    unit: str  # in the Unit Format
    per_month: bool  # priced per month of 730 hours, not per hour
    what: str  # the quantity held, as ChargeDescription says it
    divisor: int  # Berth's unit (millicores, MiB) per the price's (cores, GiB)
    # The price of a stretch asleep (hibernation), when it has one of its own: the same SKU
    # at another price of the list (another SkuPriceId).
    asleep_price_field: str | None = None


# What a piece holds, in this order: CPU, memory, storage, the namespace itself.
SKUS = (
    Sku(
        "cpu_core_hour",
        "namespace-cpu",
        "CPU quota",
        "Core-Hours",
        False,
        "{} CPU cores",
        1000,
        "asleep_cpu_core_hour",
    ),
    Sku(
        "memory_gib_hour",
        "namespace-memory",
        "Memory quota",
        "GiB-Hours",
        False,
        "{} GiB",
        1024,
        "asleep_memory_gib_hour",
    ),
    Sku("storage_gib_month", "namespace-storage", "Storage quota", "GiB-Months", True, "{} GiB", 1),
    Sku("namespace_month", "namespace", "Namespace", "Namespace-Months", True, "The namespace", 1),
)
