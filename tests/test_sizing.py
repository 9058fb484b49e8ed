import pytest

from zcube_deploy.errors import PlanError
from zcube_deploy.topology.sizing import size_fabric


@pytest.mark.parametrize(
    "gpus,R,lanes,cages,S,K,m",
    [
        (1024, 256, 2, 128, 8, 128, 16),  # zcube.md worked shapes
        (16384, 256, 2, 128, 128, 128, 1),
        (65536, 512, 4, 128, 256, 256, 1),
        (64, 128, 2, 64, 8, 8, 1),
    ],
)
def test_worked_shapes(gpus, R, lanes, cages, S, K, m):
    sz = size_fabric(gpus, 8, R, lanes, cages, 1.0)
    assert (sz.S, sz.K, sz.m) == (S, K, m)
    assert sz.rail
    assert sz.K + sz.S * sz.m <= R


def test_capacity_rounds_up_to_whole_servers():
    sz = size_fabric(1000, 8, 256, 2, 128, 1.0)
    assert sz.capacity_gpus >= 1000 and sz.K % 8 == 0


def test_oversubscription_reduces_fabric_links():
    a = size_fabric(1024, 8, 256, 2, 128, 1.0)
    b = size_fabric(1024, 8, 256, 2, 128, 2.0)
    assert b.m == a.m // 2
    assert b.effective_oversubscription == pytest.approx(2.0)


def test_non_rail_fallback_is_reported():
    # 6 GPUs, 2 per server, R = 5: S = 2 and S = 4 do not fit (K + S*m > R), S = 3 does
    sz = size_fabric(6, 2, 5, 1, 5, 1.0)
    assert (sz.S, sz.K, sz.m, sz.rail) == (3, 2, 1, False)
    assert any("no multiple of G=2 fits" in r and "NOT rail switches" in r for r in sz.reasons)
    # worked independently: the smallest S of all with K = ceil(N/S) rounded up to G, m = ceil(K/S), K + S*m <= R
    def fits(S):
        K = -(-6 // S)
        K = -(-K // 2) * 2
        return K + S * max(1, -(-K // S)) <= 5
    assert [S for S in range(1, 6) if fits(S)][0] == 3 and not any(fits(S) for S in (2, 4))


def test_refuses_beyond_non_blocking_max():
    with pytest.raises(PlanError) as exc:
        size_fabric(16384 + 8, 8, 256, 2, 128, 1.0)
    assert "(R/2)^2 = 16384" in str(exc.value)
