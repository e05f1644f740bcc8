"""The month's costs of a tenant drawn as bars: the geometry of the SVG chart on the
tenant's page (tenants.templatetags.showback), from tenants.selectors.costs' figures."""

from __future__ import annotations

from decimal import Decimal

from tenants.selectors.costs import TenantCosts, rounded


def _nice_money_scale(largest: Decimal) -> tuple[Decimal, Decimal]:
    """(step, top) of a money axis from 0 past `largest`: 1, 2 or 5 times a power of ten,
    in at most four steps."""
    if largest <= 0:
        return Decimal(1), Decimal(1)
    power = Decimal(10) ** (largest.adjusted() - 1)
    while True:
        for factor in (1, 2, 5):
            step = power * factor
            count = -(-largest // step)  # ceil
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
    ticks = []
    at = Decimal(0)
    while at <= top:
        y = round(100 - float(at * 100 / top), 2)
        ticks.append({"label": f"{at.normalize():f}", "y": y, "text_y": y + 2.5})
        at += step
    return {
        "days": days,
        "ticks": ticks,
        "top": f"{top.normalize():f}",
        "any": largest > 0,
        "width": len(days) * 10,
    }
