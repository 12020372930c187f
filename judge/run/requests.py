"""Every judge request of a run, rendered: per pair (or response), order and judge allowed to
grade it, with its content-hashed ids. Prepare stores them; nothing is sent here."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from judge.config.run_config import JudgeSpec, RunConfig
from judge.families import check_pairs_judgeable, is_same_family
from judge.hashing import content_hash
from judge.rubric.rubrics import Rubric, render_absolute, render_pairwise
from judge.types import (
    BlindedPair,
    BlindedResponse,
    ChatMessage,
    Item,
    JudgeRequest,
    Order,
)


def orders_for(config: RunConfig) -> tuple[Order, ...]:
    return ("AB", "BA") if config.orders == "both" else ("AB",)


class RequestPlanner:
    """Renders the judge requests of a run one item at a time. Which judges grade which system
    pair is settled once, up front (`systems`: every system pair the run may judge, so a pair
    no judge may grade fails before anything is stored), and each response's text is
    neutralised once however many requests show it."""

    def __init__(
        self,
        config: RunConfig,
        rubric: Rubric,
        system_pairs: Iterable[tuple[str, str]],
    ) -> None:
        self.config = config
        self.rubric = rubric
        self.orders = orders_for(config)
        self._plan = (
            check_pairs_judgeable(
                system_pairs,
                config.judges,
                allow_same_family=config.allow_same_family,
                overrides=config.families,
            )
            if config.judges
            else {}
        )
        self._same: dict[tuple[str, tuple[str, str]], bool] = {}
        self._plant = config.simulator.plant if config.simulator is not None else {}

    def judges(self, systems: tuple[str, str]) -> list[JudgeSpec]:
        return self._plan.get(tuple(sorted(systems)), [])  # type: ignore[arg-type]

    def same_family(self, judge: JudgeSpec, systems: tuple[str, str]) -> bool:
        known = self._same.get((judge.model, systems))
        if known is None:
            known = is_same_family(judge, systems, self.config.families)
            self._same[(judge.model, systems)] = known
        return known

    def _planted(self, response: BlindedResponse, system: str) -> BlindedResponse:
        """`simulator.plant`: the system's planted quality, as the simulator reads it (only
        simulated judges see it: the config refuses it beside any other)."""
        quality = self._plant.get(system)
        if quality is None:
            return response
        return response.model_copy(update={"output": f"{response.output} ⟦quality={quality}⟧"})

    def for_pairs(
        self,
        item: Item,
        pairs: Sequence[BlindedPair],
        by_id: Mapping[str, BlindedResponse],
        slots: Mapping[str, tuple[str, str]],
    ) -> Iterator[JudgeRequest]:
        """Per pair of one item, one request per order and judge allowed to grade it."""
        with self.rubric.neutralised():
            for pair in pairs:
                systems = slots[pair.pair_id]
                judges = self.judges(systems)
                a, b = by_id[pair.slot_a], by_id[pair.slot_b]
                if self._plant:
                    a, b = self._planted(a, systems[0]), self._planted(b, systems[1])
                for order in self.orders:
                    first, second = (a, b) if order == "AB" else (b, a)
                    messages = render_pairwise(self.rubric, item, first, second)
                    for judge in judges:
                        yield _request(
                            judge,
                            self.rubric,
                            messages,
                            item_id=pair.item_id,
                            pair_id=pair.pair_id,
                            order=order,
                            same_family=self.same_family(judge, systems),
                        )

    def for_responses(
        self, item: Item, blinded: Sequence[BlindedResponse], systems: Mapping[str, str]
    ) -> Iterator[JudgeRequest]:
        """Absolute grading sees one response: a judge is excluded from that system's
        responses only, i.e. the "pair" is the system with itself."""
        with self.rubric.neutralised():
            for b in blinded:
                system = systems[b.blind_id]
                judges = self.judges((system, system))
                if not judges:
                    continue
                messages = render_absolute(self.rubric, item, self._planted(b, system))
                for judge in judges:
                    yield _request(
                        judge,
                        self.rubric,
                        messages,
                        item_id=b.item_id,
                        blind_id=b.blind_id,
                        same_family=self.same_family(judge, (system, system)),
                    )


def _request(
    judge: JudgeSpec,
    rubric: Rubric,
    messages: tuple[ChatMessage, ...],
    *,
    item_id: str,
    pair_id: str | None = None,
    order: Order | None = None,
    blind_id: str | None = None,
    same_family: bool = False,
) -> JudgeRequest:
    wire = [m.model_dump(mode="json") for m in messages]
    content: dict[str, object] = {
        "provider": judge.provider,
        "model": judge.model_name,
        "base_url": judge.base_url,
        "params": judge.params,
        "messages": wire,
    }
    if judge.provider == "recorded":
        # A replayed verdict depends on which systems are judged, not only on the prompt: two
        # pairs with identical texts (e.g. two empty answers) must not share a cache entry.
        content.update(
            {
                "recording": str(judge.recorded),
                "pair_id": pair_id,
                "order": order,
                "blind_id": blind_id,
            }
        )
    cache_key = content_hash(content)
    request_id = content_hash(
        {
            "judge": judge.model,
            "rubric": rubric.hash,
            "pair_id": pair_id,
            "blind_id": blind_id,
            "order": order,
            "cache_key": cache_key,
        }
    )
    return JudgeRequest(
        request_id=request_id,
        judge=judge.model,
        rubric_id=rubric.id,
        rubric_version=rubric.version,
        rubric_hash=rubric.hash,
        kind=rubric.kind,
        item_id=item_id,
        pair_id=pair_id,
        order=order,
        blind_id=blind_id,
        messages=messages,
        params=judge.params,
        cache_key=cache_key,
        same_family=same_family,
    )
