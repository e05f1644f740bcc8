"""A tenant's costs drawn as bars: the geometry of the SVG charts on the tenant's page
(tenants.templatetags): the month's days, from tenants.selectors.costs' figures, and the
last months' used against idle, from tenants.selectors.usage_history's."""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal

from tenants.selectors.costs import TenantCosts, rounded
from tenants.selectors.usage_history import UsageMonth


def _nice_money_scale(largest: Decimal) -> tuple[Decimal, Decimal]:
    """(step, top) of a money axis from 0 past `largest`: 1, 2 or 5 times a power of ten,
    in at most four steps."""
    if largest <= 0:
        return Decimal(1), Decimal(1)
    power = Decimal(10) ** (largest.adjusted() - 1)
    while True:
        for factor in (1, 2, 5):
            step = power * factor
            # Rounded up: Decimal's // rounds toward zero, so -(-a // b) is no ceiling.
            count = (largest / step).to_integral_value(rounding=ROUND_CEILING)
            if count <= 4:
                return step, step * max(count, 1)
        power *= 10


def cost_chart(costs: TenantCosts) -> dict:
    """The month's days as bars in a 300 × 100 drawing (the dashboard's chart's geometry):
    ten units a day, the axis' top full height."""
    largest = max((each.amount for each in costs.days), default=Decimal(0))
    step, top = _nice_money_scale(largest)
    days = []
    for index, each in enumerate(costs.days):
        height = float(each.amount * 100 / top) if top else 0.0
        days.append(
            {
                "day": each.day,
                "amount": rounded(each.amount),
                "x": index * 10 + 1,
                "y": round(100 - height, 2),
                "height": round(height, 2),
                "tick": index % 7 == 0 and 3 < index < len(costs.days) - 4,
            }
        )
    return {
        "days": days,
        "ticks": _ticks(step, top),
        "top": f"{top.normalize():f}",
        "any": largest > 0,
        "width": len(days) * 10,
    }


def history_chart(history: list[UsageMonth]) -> dict:
    """Month over month in a (60 a month) × 100 drawing: a bar of what each month cost, from
    the bottom: the CPU and memory used, the CPU and memory idle, and the rest (storage, the
    namespace itself, hours without a measurement)."""
    largest = max((each.figures.cost for each in history), default=Decimal(0))
    step, top = _nice_money_scale(largest)
    months = []
    for index, each in enumerate(history):
        figures, base = each.figures, 100.0
        parts = []
        for kind, amount in (
            ("used", figures.used_cost),
            ("idle", figures.idle_cost),
            ("unmeasured", figures.unmeasured_cost),
        ):
            height = float(amount * 100 / top) if top and amount > 0 else 0.0
            base -= height
            if height:
                parts.append({"kind": kind, "y": round(base, 2), "height": round(height, 2)})
        months.append(
            {
                "month": each.month,
                "usage": each,
                "x": index * 60 + 12,
                "label_x": index * 60 + 30,
                "parts": parts,
                "year": index == 0 or each.month.month == 1,
            }
        )
    return {
        "months": months,
        "first": history[0].month if history else None,
        "last": history[-1].month if history else None,
        "ticks": _ticks(step, top),
        "top": f"{top.normalize():f}",
        "any": largest > 0,
        "width": len(months) * 60,
    }


def _ticks(step: Decimal, top: Decimal) -> list[dict]:
    ticks = []
    at = Decimal(0)
    while at <= top:
        y = round(100 - float(at * 100 / top), 2)
        ticks.append({"label": f"{at.normalize():f}", "y": y, "text_y": y + 2.5})
        at += step
    return ticks
