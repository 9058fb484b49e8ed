"""Checks of the traffic model written independently of it (issue 25, item 6).

- identities: NCCL's bus-bandwidth formulas (ring all-reduce 2(n-1)/n x S / B; all-gather and
  all-to-all (n-1)/n x S / B) on one non-blocking switch and on a two-tier non-blocking Clos with
  an even ECMP split, to 1e-9 relative;
- max-min fairness: >= 200 random small instances against an LP solved with scipy (the classic
  sequence of LPs: raise the smallest unfrozen rate, freeze the flows that cannot rise further),
  and the definition (every flow has a saturated link on which its rate is the largest);
- ECMP hashing: the mean busiest of n paths under m hashed flows equals the balls-into-bins
  expectation (computed exactly here) within 2 %;
- the paper's testbed: ZCube(4,2), 16 GPUs, finishes all-to-all and all-reduce in the time of a
  non-blocking ROFT.

Each has a known-bad case: a broken model (or fabric) that the same check rejects.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from zcube_deploy.traffic import fluid, net, run, workloads
from zcube_deploy.traffic.flows import Transfers, build_subflows
from zcube_deploy.traffic.maxmin import max_min_rates
from zcube_deploy.traffic.routes import RouteSet

scipy_optimize = pytest.importorskip("scipy.optimize")


# ------------------------------------------------------------------ identities
def completion(n_: net.Net, tr: Transfers) -> float:
    return run.measure(n_, tr, "split", None)["completion_time_s"]


def identity_errors(n_: net.Net, S: float = 2.0**30) -> dict:
    """Relative error of the model against the formulas, per collective (G = 1: no NVLink)."""
    n, B = n_.n_gpus, n_.gpu_bandwidth_gbps * 1e9 / 8  # bytes per second
    cases = {
        "allreduce": (workloads.collective("allreduce", n_.server_of, S), 2 * (n - 1) / n * S / B),
        "all-gather": (workloads.collective("all-gather", n_.server_of, S), (n - 1) / n * S / B),
        # all-to-all: S is the per-GPU buffer, S / n per destination
        "all-to-all": (workloads.all_to_all(n, S / n), (n - 1) / n * S / B),
    }
    return {k: abs(completion(n_, tr) - want) / want for k, (tr, want) in cases.items()}


@pytest.mark.parametrize("shape", ["one switch", "two-tier Clos"])
def test_collective_identities(shape):
    # one switch: 32 GPUs on one leaf of k/2 = 64 ports; two tiers: 16 ports per leaf, 8 leaves, 4 spines
    n_ = net.clos(32, 1, 128, 200.0) if shape == "one switch" else net.clos(128, 1, 32, 200.0)
    assert (n_.n_switches == 1) == (shape == "one switch")
    errors = identity_errors(n_)
    assert max(errors.values()) < 1e-9, errors


def test_identities_known_bad(monkeypatch):
    """A model whose fair shares are off by 1 % fails the identity check."""
    real, real_small = fluid.max_min_rates, fluid.max_min_small
    monkeypatch.setattr(fluid, "max_min_rates", lambda *a, **k: real(*a, **k) * 0.99)
    monkeypatch.setattr(fluid, "max_min_small", lambda *a: [x * 0.99 for x in real_small(*a)])
    errors = identity_errors(net.clos(128, 1, 32, 200.0))
    assert min(errors.values()) > 1e-3


def test_identities_known_bad_fabric():
    """An oversubscribed Clos (half the spine capacity) is slower than the formula."""
    n_ = net.clos(128, 1, 32, 200.0)
    n_.cap[n_.kind == net.KIND_FABRIC] /= 2
    assert identity_errors(n_)["all-to-all"] > 0.1


# ------------------------------------------------------------------ max-min fairness
def random_instance(rng: np.random.Generator):
    """Flows on explicit links (weight 1), some also on a route with fractional weights."""
    L = int(rng.integers(2, 7))
    F = int(rng.integers(1, 7))
    cap = rng.choice([1.0, 2.0, 3.0, 5.0, 10.0], L) * rng.uniform(0.5, 1.5, L)
    links = np.full((F, 2), -1)
    routes = RouteSet()
    route = np.full(F, -1)
    for f in range(F):
        k = int(rng.integers(1, 3))
        links[f, :k] = rng.choice(L, k, replace=False)
        if rng.random() < 0.35:  # an ECMP-split part over two links not among its explicit ones
            free = [x for x in range(L) if x not in links[f]]
            if len(free) >= 2:
                two = rng.choice(free, 2, replace=False)
                w = float(rng.choice([0.5, 0.25]))
                route[f] = routes.add(two, np.array([w, 1 - w]))
    return cap, links, route, routes.freeze()


def incidence(L: int, links, route, routes) -> np.ndarray:
    """A[l, f]: weight of flow f on link l, written out independently of the model's bincounts."""
    F = len(route)
    A = np.zeros((L, F))
    for f in range(F):
        for x in links[f]:
            if x >= 0:
                A[x, f] += 1.0
        if route[f] >= 0:
            for i in range(len(routes.row)):
                if routes.row[i] == route[f]:
                    A[routes.link[i], f] += routes.frac[i]
    return A


def lp_max_min(A: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Max-min fair rates by successive LPs: maximise the common level t of the unfrozen flows; a
    flow that cannot exceed t while the others keep >= t (second LP) is frozen at t."""
    L, F = A.shape
    fixed = np.full(F, np.nan)
    while np.isnan(fixed).any():
        free = np.isnan(fixed)
        # variables: r (F), t; maximise t
        c = np.zeros(F + 1)
        c[-1] = -1.0
        A_ub = [np.append(A[l], 0.0) for l in range(L)]
        b_ub = list(cap)
        for f in np.flatnonzero(free):
            row = np.zeros(F + 1)
            row[f], row[-1] = -1.0, 1.0  # t - r_f <= 0
            A_ub.append(row)
            b_ub.append(0.0)
        bounds = [(fixed[f], fixed[f]) if not free[f] else (0, None) for f in range(F)] + [(0, None)]
        t = scipy_optimize.linprog(c, A_ub=np.array(A_ub), b_ub=b_ub, bounds=bounds, method="highs").x[-1]
        for f in np.flatnonzero(free):
            c2 = np.zeros(F + 1)
            c2[f] = -1.0
            bnd = [(fixed[g], fixed[g]) if not free[g] else (t * (1 - 1e-12), None) for g in range(F)] + [(0, None)]
            best = scipy_optimize.linprog(c2, A_ub=np.array(A_ub)[:L], b_ub=b_ub[:L], bounds=bnd, method="highs").x[f]
            if best <= t * (1 + 1e-7) + 1e-12:
                fixed[f] = t
    return fixed


def definition_holds(A: np.ndarray, cap: np.ndarray, rate: np.ndarray, tol: float = 1e-7) -> bool:
    """Unit-weight instances: feasible, and every flow has a bottleneck link (saturated, and no
    flow on it has a larger rate)."""
    load = A @ rate
    if (load > cap * (1 + tol)).any():
        return False
    for f in range(A.shape[1]):
        ok = False
        for l in np.flatnonzero(A[:, f] > 0):
            if load[l] >= cap[l] * (1 - tol) and rate[f] >= rate[A[l] > 0].max() * (1 - tol):
                ok = True
        if not ok:
            return False
    return True


def test_max_min_matches_lp_on_random_instances():
    rng = np.random.default_rng(2025)
    checked = unit = 0
    for _ in range(220):
        cap, links, route, routes = random_instance(rng)
        A = incidence(len(cap), links, route, routes)
        model = max_min_rates(cap, links, route, routes)  # the plain-Python filling (few sub-flows)
        vectorised = max_min_rates(cap, links, route, routes, small=0)  # the numpy filling
        want = lp_max_min(A, cap)
        np.testing.assert_allclose(model, want, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(vectorised, want, rtol=1e-6, atol=1e-9)
        if (route < 0).all():
            assert definition_holds(A, cap, model)
            unit += 1
        checked += 1
    assert checked >= 200 and unit >= 50


def test_max_min_known_bad():
    """Equal shares per link (not max-min: a flow bottlenecked elsewhere leaves capacity unused)
    differ from the LP and break the definition."""
    cap = np.array([1.0, 10.0])
    links = np.array([[0, 1], [1, -1]])  # flow 0 on links 0 and 1, flow 1 on link 1 only
    routes = RouteSet().freeze()
    A = incidence(2, links, np.full(2, -1), routes)
    equal_share = np.array([1.0, 5.0])  # link 1 split 5 / 5, flow 0 capped at 1 by link 0
    want = lp_max_min(A, cap)
    np.testing.assert_allclose(want, [1.0, 9.0])
    np.testing.assert_allclose(max_min_rates(cap, links, np.full(2, -1), routes), want)
    np.testing.assert_allclose(max_min_rates(cap, links, np.full(2, -1), routes, small=0), want)
    assert not np.allclose(equal_share, want)
    assert not definition_holds(A, cap, equal_share)


# ------------------------------------------------------------------ ECMP hashing: balls into bins
def expected_max_load(m: int, n: int) -> float:
    """E[max bin load] of m balls thrown uniformly into n bins, exactly:
    P(max <= k) = m! / n^m [x^m] (sum_{j<=k} x^j / j!)^n."""
    total = 0.0
    for k in range(m):
        poly = np.zeros(m + 1)
        poly[0] = 1.0
        term = np.array([1 / math.factorial(j) for j in range(k + 1)] + [0.0] * (m - k))
        for _ in range(n):
            poly = np.convolve(poly, term)[:m + 1]
        p_le = poly[m] * math.factorial(m) / n**m
        total += 1 - p_le  # E[max] = sum_{k>=0} P(max > k)
    return total


def mean_busiest_path(m: int, n: int, samples: int, rng_factory) -> float:
    """m flows leaf 1 -> leaf 2 of a Clos whose leaf has n uplinks to one spine: the first hop's
    n parallel links are the n paths' distinct part; the mean over samples of the busiest one."""
    n_ = net.clos(2 * n, 1, 2 * n, 200.0)  # two leaves of n GPUs, one spine, n parallel uplinks per leaf
    assert n_.n_switches == 3
    leaf1 = 0
    src = np.arange(m) % n
    dst = n + np.arange(m) % n
    tr = Transfers(src, dst, np.ones(m), np.zeros(m))
    busiest = []
    for s in range(samples):
        sf = build_subflows(n_, tr, "hash", rng_factory(s))
        first = sf.routes.link[sf.routes.ptr[sf.route]]  # a hashed route lists its links hop by hop
        assert (n_.end_a[first] == leaf1).all()
        busiest.append(np.bincount(first).max())
    return float(np.mean(busiest))


@pytest.mark.parametrize("m,n", [(8, 8), (16, 8), (8, 64)])
def test_ecmp_hashing_is_balls_into_bins(m, n):
    want = expected_max_load(m, n)
    got = mean_busiest_path(m, n, 3000, lambda s: np.random.default_rng([7, s]))
    assert abs(got - want) / want < 0.02, (got, want)


def test_balls_into_bins_reference():
    # the figures of traffic.md (20,000-trial Monte-Carlo): 2.60 at n = 8, 3.95 at n = 64
    assert abs(expected_max_load(8, 8) - 2.60) < 0.01
    assert abs(expected_max_load(64, 64) - 3.95) < 0.01


class _HalfRange:
    """A broken hash: only the lower half of the next hops is ever drawn."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def random(self, size):
        return self.rng.random(size) * 0.5


def test_ecmp_hashing_known_bad():
    want = expected_max_load(8, 8)
    got = mean_busiest_path(8, 8, 500, lambda s: _HalfRange([7, s]))
    assert abs(got - want) / want > 0.02


# ------------------------------------------------------------------ the paper's testbed
@pytest.fixture(scope="module")
def zcube_4_2():
    from tests.test_invariants_property import make_catalog, make_inventory
    from zcube_deploy.inventory import resolve_inventory
    from zcube_deploy.plan import build_plan

    plan = build_plan(resolve_inventory(make_inventory(4, 4, 1.0, 2), catalog=make_catalog(4, 2, 4, 2)))
    assert plan["sizing"]["S"] == 4 and plan["sizing"]["K"] == 4 and plan["sizing"]["installed_gpus"] == 16
    return plan


def parity(z: net.Net, r: net.Net, S: float = 2.0**26) -> dict:
    out = {}
    for name, make in (("all-to-all", lambda n_: workloads.all_to_all(n_.n_gpus, S / 16)),
                       ("allreduce", lambda n_: workloads.collective("allreduce", n_.server_of, S))):
        tz, tr = completion(z, make(z)), completion(r, make(r))
        out[name] = abs(tz - tr) / tr
    return out


def test_zcube_4_2_matches_non_blocking_roft(zcube_4_2):
    z = net.zcube_from_plan(zcube_4_2)
    roft = net.roft(16, 4, 8, 200.0)  # k = 8: one pod of 4 servers, 4 rail leaves, 2 spines: non-blocking
    assert z.gpu_bandwidth_gbps == roft.gpu_bandwidth_gbps == 400.0
    gaps = parity(z, roft)
    assert max(gaps.values()) < 1e-9, gaps


def test_zcube_4_2_parity_known_bad(zcube_4_2):
    """ZCube with its fabric links at half speed no longer matches."""
    z = net.zcube_from_plan(zcube_4_2)
    z.cap[z.kind == net.KIND_FABRIC] /= 2
    gaps = parity(z, net.roft(16, 4, 8, 200.0))
    assert min(gaps.values()) > 0.1, gaps
