"""What a reply cost: its reported usage priced with pydantic's ``genai-prices`` price list.

The price list is a dependency (the ``cost`` extra), imported only when something is priced:
importing llm-rx never imports it. Which price list providers a wire's models are looked up
under is provider knowledge, kept in `llm_rx.native.observability`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ConfigDict

from .._extras import install_hint
from ..native.observability import price_providers, priced_extras
from ..response import Usage

__all__ = ["Cost", "price", "price_list"]

_PER_MTOK = 1_000_000


class Cost(BaseModel):
    """The price of one reply, or why there is none.

    ``total`` is the price list's own total; ``input`` (uncached prompt tokens),
    ``cache_read``, ``cache_write``, ``output`` (generated tokens other than reasoning) and
    ``reasoning`` are its token parts, ``server_tools`` the rest (web searches the usage
    reported, at the list's price; ``None`` when there were none). A part is ``None`` when
    its count was not reported; ``total`` is ``None`` when a count the price needs (input or
    output) was not, or the model is not in the price list — ``reason`` says which: never a
    number made of invented zeros. ``model`` and ``provider`` are the price list entry the
    reply was priced as (``served_model``: the model the wire reported, the one priced);
    ``price_list`` names the list and its version, ``prices_updated`` the time of a
    downloaded update (``None``: the snapshot bundled with that version), ``priced_at`` the
    date whose prices applied. ``complete`` is false for a reply cut short or stopped:
    priced on the usage reported before the end. When such a reply's output tokens were not
    reported (a provider that reports usage only at the end), ``total`` is ``None`` and
    ``at_least`` is the price of what was reported (the input parts: the output billed is
    not known), as ``reason`` says. ``notes`` says what the price assumed.
    """

    model_config = ConfigDict(frozen=True)

    currency: str = "USD"
    total: Decimal | None
    input: Decimal | None = None
    cache_read: Decimal | None = None
    cache_write: Decimal | None = None
    output: Decimal | None = None
    reasoning: Decimal | None = None
    server_tools: Decimal | None = None
    model: str | None = None
    served_model: str | None = None
    provider: str | None = None
    price_list: str
    prices_updated: datetime | None = None
    priced_at: datetime
    complete: bool
    reason: str | None = None
    notes: tuple[str, ...] = ()
    at_least: Decimal | None = None

    def text(self) -> str:
        """One line for a footer: ``"cost $0.0123"`` (``"cost: unknown (...)"`` if none)."""
        if self.total is None and self.at_least is not None:
            return f"cost: at least {_money(self.currency, self.at_least)} (output tokens " \
                "not reported)"
        if self.total is None:
            return f"cost: unknown ({self.reason})"
        partial = " (so far)" if not self.complete else ""
        return f"cost {_money(self.currency, self.total)}{partial}"


def price_list() -> ModuleType:
    """The ``genai_prices`` module, or an ``ImportError`` that says how to install it."""
    try:
        return importlib.import_module("genai_prices")
    except ImportError as error:  # pragma: no cover - the extra is in the dev install
        raise ImportError(
            f"cost() needs the price list: {install_hint('cost')}"
        ) from error


def price(
    usage: Usage,
    model: str | None,
    provider: str | None,
    *,
    complete: bool,
    at: datetime | None = None,
) -> Cost:
    """Price ``usage`` of a reply ``model`` served over ``provider``'s wire, at ``at``
    (the prices of that date; now when ``None``)."""
    prices = price_list()
    when = at or datetime.now(UTC)
    base: dict[str, Any] = {
        "served_model": model, "price_list": f"genai-prices {prices.__version__}",
        "priced_at": when, "complete": complete,
    }
    if usage.output_tokens is None and usage.input_tokens is not None and model is not None \
            and not complete:
        return _input_only(prices, usage, model, provider or "", when, base)
    if usage.input_tokens is None or usage.output_tokens is None:
        missing = "usage" if not usage.reported else (
            "input tokens" if usage.input_tokens is None else "output tokens")
        return Cost(total=None, reason=f"{missing} not reported", **base)
    if model is None:
        return Cost(total=None, reason="the served model was not reported", **base)
    try:
        found = _calculate(prices, usage, model, provider or "", when)
    except ValueError as error:  # (parts that add up to more than their whole)
        return Cost(total=None, reason=f"the price list refused the usage: {error}", **base)
    if found is None:
        return Cost(total=None, reason=f"no price for {model!r} ({provider})", **base)
    hour = priced_extras(provider or "", usage.native).get("cache_write_1h_tokens", 0)
    return _cost(found, usage, base, hour)


def _input_only(prices: ModuleType, usage: Usage, model: str, provider: str, when: datetime,
                base: dict[str, Any]) -> Cost:
    """A reply cut or stopped before its output tokens were reported: what the input
    reported costs (``at_least``), the total unknown."""
    reason = "output tokens not reported (the reply ended before its usage did)"
    counted = usage.model_copy(update={"output_tokens": 0, "reasoning_tokens": None})
    try:
        found = _calculate(prices, counted, model, provider, when)
    except ValueError:
        found = None
    if found is None:
        return Cost(total=None, reason=reason, **base)
    parts = _cost(found, counted, base, priced_extras(provider, usage.native).get(
        "cache_write_1h_tokens", 0))
    least = parts.total
    return parts.model_copy(update={
        "total": None, "output": None, "reasoning": None, "server_tools": None,
        "at_least": least,
        "reason": f"{reason}: the input alone costs {_money(parts.currency, least)}"})


def _money(currency: str, amount: Decimal | None) -> str:
    sign = "$" if currency == "USD" else f"{currency} "
    return f"{sign}{_short(amount or Decimal(0))}"


def _calculate(
    prices: ModuleType, usage: Usage, model: str, provider: str, when: datetime
) -> Any:
    """The price list's calculation under the first price list provider that has ``model``."""
    counts = {
        "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "output_reasoning_tokens": usage.reasoning_tokens,
        **priced_extras(provider, usage.native),
    }
    reported = prices.Usage(**{key: value for key, value in counts.items() if value is not None})
    for listed in price_providers(provider, model):
        try:
            return prices.calc_price(
                reported, model, provider_id=listed, genai_request_timestamp=when)
        except LookupError:
            continue
    return None  # (counts the list finds inconsistent raise ValueError: see ``price``)


def _cost(found: Any, usage: Usage, base: dict[str, Any], hour: int) -> Cost:
    """The ``Cost`` of a calculation, with its token parts at the rates it used (``hour``:
    the cache writes kept an hour, at their own rate)."""
    from genai_prices.types import calc_unit_price

    rates = found.model_price
    total_input = usage.input_tokens or 0

    def part(rate: Any, count: int | None) -> Decimal | None:
        if count is None:
            return None
        return Decimal(calc_unit_price(rate, count, total_input, _PER_MTOK))

    cached = (usage.cache_read_tokens or 0) + (usage.cache_write_tokens or 0)
    reasoning_rate = rates.output_reasoning_mtok or rates.output_mtok
    generated = usage.output_tokens or 0
    notes: list[str] = []
    if usage.cache_read_tokens is None and rates.cache_read_mtok is not None:
        notes.append("cache reads not reported: every input token priced as uncached")
    parts = (
        part(rates.input_mtok, total_input - cached),
        part(rates.cache_read_mtok or rates.input_mtok, usage.cache_read_tokens),
        _writes(part, rates, usage.cache_write_tokens, hour),
        part(rates.output_mtok, generated - (usage.reasoning_tokens or 0)),
        part(reasoning_rate, usage.reasoning_tokens),
    )
    total = Decimal(found.total_price)
    rest = total - sum((value for value in parts if value is not None), Decimal(0))
    return Cost(
        total=total,
        input=parts[0], cache_read=parts[1], cache_write=parts[2], output=parts[3],
        reasoning=parts[4],
        server_tools=rest if rest else None,
        model=found.model.id,
        provider=found.provider.id,
        prices_updated=found.auto_update_timestamp,
        notes=tuple(notes),
        **base,
    )


def _writes(
    part: Callable[[Any, int | None], Decimal | None], rates: Any, writes: int | None, hour: int
) -> Decimal | None:
    """The cache writes' part: those kept an hour (``hour`` of ``writes``) at their rate."""
    five = rates.cache_write_mtok or rates.input_mtok
    if not hour or writes is None:
        return part(five, writes)
    return part(five, writes - hour) + part(  # type: ignore[operator]
        rates.cache_write_1h_mtok or five, hour)


def _short(amount: Decimal) -> str:
    """An amount with four significant digits after the leading zeros (``0.0001234``)."""
    if amount == 0:
        return "0"
    rounded = amount.quantize(Decimal(1).scaleb(min(amount.adjusted() - 3, -2)))
    return format(rounded.normalize(), "f")
