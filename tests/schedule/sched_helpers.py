"""Small builders shared by the scheduling tests."""

from __future__ import annotations

from npuweave.schedule import Board, make_tenant


def board(units_per_tenant, buf=100, bw=10.0, state=None):
    """A board whose tenants have the given ``[(size, comp), ...]`` units, one request each
    issued at 0; ``state = (t_m, t_c, [(size, completion), ...])`` overrides the schedule state."""
    tenants = [make_tenant(f"T{k}", [c for _, c in units], [s for s, _ in units], buf)
               for k, units in enumerate(units_per_tenant)]
    b = Board(tenants, buf, bw)
    for t in range(len(tenants)):
        b.issue(t, 0, 0.0)
    if state is not None:
        b.t_m, b.t_c = state[0], state[1]
        b.set_in_flight(state[2])
    return b
