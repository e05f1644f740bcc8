"""Showback's records: what each namespace held and when (its allocations), the rows a
closed month was counted into, measured usage per day and the budget alerts sent."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from tenants.choices import AllocationChange, BudgetMeasure, ChargeKind
from tenants.models.clusters import Cluster
from tenants.models.namespaces import Namespace
from tenants.models.tenancy import Tenant


class Allocation(models.Model):
    """A namespace's quota held from `started_at` until `ended_at` (open while it lasts):
    one row from Ready, a new one at each applied quota change, closed when it goes away.
    What showback charges, hour by hour, at the prices in force at each hour."""

    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="allocations")
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="+")
    cpu_millis = models.PositiveIntegerField()
    memory_mib = models.PositiveIntegerField()
    storage_gib = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    started_by = models.CharField(max_length=20, choices=AllocationChange.choices)
    ended_at = models.DateTimeField(null=True, blank=True)
    ended_by = models.CharField(max_length=20, choices=AllocationChange.choices, blank=True)
    # Held while the namespace slept (hibernation): priced at the cluster's asleep rates.
    asleep = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["namespace"],
                condition=models.Q(ended_at__isnull=True),
                name="one_open_allocation_per_namespace",
            )
        ]
        indexes = [
            models.Index(fields=["tenant", "started_at"], name="allocation_tenant_start"),
            models.Index(fields=["ended_at"], name="allocation_end"),
        ]
        ordering = ["started_at", "pk"]

    def __str__(self) -> str:
        return f"{self.namespace_id} from {self.started_at:%Y-%m-%d %H:%M}"


class ClosedMonth(models.Model):
    """A month counted into MonthlyCharge rows: read from them ever after."""

    month = models.DateField(unique=True)
    closed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-month"]

    def __str__(self) -> str:
        return f"{self.month:%Y-%m} (closed)"


class FrozenRows(models.QuerySet):
    """A closed month's rows are never changed or removed: a correction is a new row."""

    def update(self, **kwargs):
        raise TypeError("A closed month's charges do not change; add an adjustment.")

    def delete(self):
        raise TypeError("A closed month's charges are not removed; add an adjustment.")


class MonthlyCharge(models.Model):
    """One row of a closed month: a namespace's allocation (awake or asleep) at one set of
    prices for part of the month (`charge`), or a dated correction a platform admin added
    (`adjustment`)."""

    month = models.DateField()
    kind = models.CharField(max_length=20, choices=ChargeKind.choices)
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    namespace = models.ForeignKey(
        Namespace, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # As they were when the month closed: names may be reused later.
    namespace_name = models.CharField(max_length=63, blank=True)
    cluster_name = models.CharField(max_length=63, blank=True)
    project_name = models.CharField(max_length=63, blank=True)
    tier_slug = models.CharField(max_length=63, blank=True)
    ephemeral = models.BooleanField(default=False)
    currency = models.CharField(max_length=3)
    cpu_millis = models.PositiveIntegerField(default=0)
    memory_mib = models.PositiveIntegerField(default=0)
    storage_gib = models.PositiveIntegerField(default=0)
    cpu_core_hour = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    memory_gib_hour = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    storage_gib_month = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    namespace_month = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    asleep_cpu_core_hour = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    asleep_memory_gib_hour = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    # A stretch the namespace slept through (hibernation): its CPU and memory charged at the
    # asleep prices. `savings`: what it would have cost awake less `cost`, unrounded.
    asleep = models.BooleanField(default=False)
    savings = models.DecimalField(max_digits=20, decimal_places=10, default=0)
    charged_from = models.DateTimeField()
    charged_until = models.DateTimeField()
    # The row's amount, unrounded (an adjustment's as given); rounded to the cent when shown.
    cost = models.DecimalField(max_digits=20, decimal_places=10)
    note = models.CharField(max_length=500, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = FrozenRows.as_manager()

    class Meta:
        indexes = [models.Index(fields=["month", "tenant"], name="charge_month_tenant")]
        ordering = ["month", "tenant", "namespace_name", "charged_from", "pk"]

    def __str__(self) -> str:
        return f"{self.month:%Y-%m} {self.kind} {self.namespace_name or self.tenant_id}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise TypeError("A closed month's charges do not change; add an adjustment.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError("A closed month's charges are not removed; add an adjustment.")


class UsageDay(models.Model):
    """What a namespace used on one day, measured: the averages of Prometheus range queries
    over the day at a fixed step (tenants.usage_history)."""

    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="usage_days")
    day = models.DateField()
    cpu_cores = models.FloatField()
    memory_gib = models.FloatField()
    samples = models.PositiveIntegerField()
    collected_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["namespace", "day"], name="one_usage_row_per_day")
        ]
        indexes = [models.Index(fields=["day"], name="usage_day")]

    def __str__(self) -> str:
        return f"{self.namespace_id} on {self.day}"


class BudgetAlert(models.Model):
    """A tenant told once in a month that a measure passed a share of its budget."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="budget_alerts")
    month = models.DateField()
    measure = models.CharField(max_length=20, choices=BudgetMeasure.choices)
    percent = models.PositiveSmallIntegerField()
    # What was reached and of what, as people read it ("EUR 412.50 of EUR 500.00").
    detail = models.CharField(max_length=200)
    sent_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "month", "measure", "percent"], name="one_alert_per_month"
            )
        ]
        ordering = ["-month", "measure", "percent"]

    def __str__(self) -> str:
        return f"{self.measure} {self.percent} % in {self.month:%Y-%m}"
