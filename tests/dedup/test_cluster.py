import math
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup.cluster import (
    Cluster,
    ClusterTable,
    KeepPolicy,
    choose_keepers,
    cluster_table,
    connected_components,
    keepers_by_rank,
    preference_rank,
    removed_mask,
    star_clusters,
)
from neardup.errors import ConfigError, InputError


def cc(n, pairs):
    left = np.array([a for a, _ in pairs], dtype=np.int64)
    right = np.array([b for _, b in pairs], dtype=np.int64)
    return connected_components(n, left, right).tolist()


def star(n, scored_pairs, rank=None, min_score=0.5):
    left = np.array([a for a, _, _ in scored_pairs], dtype=np.int64)
    right = np.array([b for _, b, _ in scored_pairs], dtype=np.int64)
    scores = np.array([s for _, _, s in scored_pairs], dtype=np.float64)
    rank = np.arange(n) if rank is None else np.asarray(rank)
    return star_clusters(n, left, right, scores, rank, min_score).tolist()


# ── references ───────────────────────────────────────────────────────────────────────────────


def bfs_labels(n, pairs):
    """Plain BFS components, each labelled by its smallest member."""
    adjacency = [[] for _ in range(n)]
    for a, b in pairs:
        adjacency[a].append(b)
        adjacency[b].append(a)
    labels = [-1] * n
    for start in range(n):  # ascending: the first unvisited node is its component's minimum
        if labels[start] >= 0:
            continue
        labels[start] = start
        queue = deque([start])
        while queue:
            for m in adjacency[queue.popleft()]:
                if labels[m] < 0:
                    labels[m] = start
                    queue.append(m)
    return labels


def star_reference(n, scored_pairs, rank, min_score):
    """The chaining guard written recursively, as specified: per component the best-ranked
    document is the representative, its direct matches ≥ min_score join, the rest are
    split into components again (by all pairs among them) and clustered the same way."""
    strong = [set() for _ in range(n)]
    every = [set() for _ in range(n)]
    for a, b, s in scored_pairs:
        every[a].add(b)
        every[b].add(a)
        if s >= min_score and a != b:
            strong[a].add(b)
            strong[b].add(a)
    cluster_of = [-1] * n

    def components(nodes):
        seen, out = set(), []
        for start in sorted(nodes):
            if start in seen:
                continue
            comp, stack = {start}, [start]
            seen.add(start)
            while stack:
                for m in every[stack.pop()] & nodes:
                    if m not in seen:
                        seen.add(m)
                        comp.add(m)
                        stack.append(m)
            out.append(comp)
        return out

    def place(nodes):
        for comp in components(nodes):
            rep = min(comp, key=lambda d: (rank[d], d))
            members = {rep} | (strong[rep] & comp)
            for m in members:
                cluster_of[m] = rep
            if comp - members:
                place(comp - members)

    place(set(range(n)))
    smallest = {}
    for i in range(n):
        smallest.setdefault(cluster_of[i], i)
    return [smallest[cluster_of[i]] for i in range(n)]


graphs = st.integers(min_value=0, max_value=30).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n)
        if n
        else st.just([]),
    )
)
scored_graphs = st.integers(min_value=1, max_value=25).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(
            st.tuples(
                st.integers(0, n - 1),
                st.integers(0, n - 1),
                st.sampled_from([0.2, 0.5, 0.7, 0.9, 1.0]),
            ),
            max_size=3 * n,
        ),
        st.permutations(range(n)),
        st.sampled_from([0.0, 0.5, 0.7, 0.95]),
    )
)


# ── connected components ─────────────────────────────────────────────────────────────────────


def test_chain_is_one_component():
    assert cc(5, [(0, 1), (1, 2), (2, 3)]) == [0, 0, 0, 0, 4]


def test_star_and_two_components_labelled_by_smallest_member():
    assert cc(7, [(6, 3), (3, 5), (4, 1), (3, 4)]) == [0, 1, 2, 1, 1, 1, 1]
    assert cc(6, [(5, 4), (2, 1), (1, 0)]) == [0, 0, 0, 3, 4, 4]


def test_self_and_duplicate_pairs_and_isolated_nodes():
    assert cc(4, [(2, 2), (1, 3), (3, 1), (1, 3)]) == [0, 1, 2, 1]
    assert cc(3, []) == [0, 1, 2]
    assert cc(0, []) == []


def test_accepts_int32_and_lists():
    left = np.array([2, 0], dtype=np.int32)
    right = np.array([1, 3], dtype=np.uint32)
    labels = connected_components(4, left, right)
    assert labels.dtype == np.int64
    assert labels.tolist() == [0, 1, 1, 0]
    assert connected_components(3, [0], [2]).tolist() == [0, 1, 0]


@pytest.mark.parametrize(
    ("n", "left", "right"),
    [
        (3, [0, 3], [1, 1]),
        (3, [-1], [1]),
        (3, [0, 1], [1]),
        (3, [0.0], [1.0]),
        (3, [[0]], [[1]]),
    ],
)
def test_bad_pairs_are_input_errors(n, left, right):
    with pytest.raises(InputError):
        connected_components(n, np.array(left), np.array(right))


def test_bad_n_is_config_error():
    with pytest.raises(ConfigError, match="n="):
        connected_components(-1, np.array([], dtype=np.int64), np.array([], dtype=np.int64))


@settings(max_examples=200, deadline=None)
@given(graphs)
def test_union_find_matches_bfs(graph):
    n, pairs = graph
    assert cc(n, pairs) == bfs_labels(n, pairs)


@settings(max_examples=50, deadline=None)
@given(graphs, st.randoms(use_true_random=False))
def test_labels_do_not_depend_on_pair_order_or_direction(graph, rnd):
    n, pairs = graph
    shuffled = [(b, a) if rnd.random() < 0.5 else (a, b) for a, b in pairs]
    rnd.shuffle(shuffled)
    assert cc(n, shuffled) == cc(n, pairs)


# ── chaining guard ───────────────────────────────────────────────────────────────────────────

A, B, C = 0, 1, 2


def test_guard_breaks_a_chain_whose_ends_are_unrelated():
    chain = [(A, B, 0.9), (B, C, 0.9)]
    assert cc(3, [(a, b) for a, b, _ in chain]) == [0, 0, 0]  # without the guard: merged
    assert star(3, chain) == [0, 0, 2]  # A represents; C does not match A


def test_guard_keeps_the_chain_when_its_middle_is_the_representative():
    chain = [(A, B, 0.9), (B, C, 0.9)]
    assert star(3, chain, rank=[1, 0, 2]) == [0, 0, 0]  # B represents; both match B


def test_guard_merges_when_the_ends_were_verified_together():
    assert star(3, [(A, B, 0.9), (B, C, 0.9), (C, A, 0.6)]) == [0, 0, 0]
    assert star(3, [(A, B, 0.9), (B, C, 0.9), (C, A, 0.4)]) == [0, 0, 2]  # below min_score


def test_guard_ignores_pairs_below_min_score_and_self_pairs():
    assert star(4, [(0, 1, 0.3), (2, 2, 1.0), (3, 2, 0.5)], min_score=0.5) == [0, 1, 2, 2]


def test_guard_places_the_rest_recursively():
    # a path 0-1-2-3-4 with rank 0 first: {0,1}, then 2 is best of the rest: {2,3}, then {4}
    path = [(i, i + 1, 1.0) for i in range(4)]
    assert star(5, path) == [0, 0, 2, 2, 4]
    # rank prefers 2: {1,2,3} first, then 0 and 4 are singletons
    assert star(5, path, rank=[3, 1, 0, 2, 4]) == [0, 1, 1, 1, 4]


def test_guard_rejects_bad_arguments():
    one = np.array([0])
    with pytest.raises(ConfigError, match="finite"):
        star_clusters(2, one, one + 1, np.array([1.0]), np.arange(2), math.nan)
    with pytest.raises(InputError, match="scores"):
        star_clusters(2, one, one + 1, np.array([1.0, 1.0]), np.arange(2), 0.5)
    with pytest.raises(InputError, match="rank"):
        star_clusters(2, one, one + 1, np.array([1.0]), np.arange(3), 0.5)


@settings(max_examples=200, deadline=None)
@given(scored_graphs)
def test_guard_matches_the_recursive_rule(graph):
    n, pairs, rank, min_score = graph
    assert star(n, pairs, rank, min_score) == star_reference(n, pairs, rank, min_score)


@settings(max_examples=200, deadline=None)
@given(scored_graphs)
def test_guard_refines_components_and_every_member_matches_its_keeper(graph):
    n, pairs, rank, min_score = graph
    labels = np.array(star(n, pairs, rank, min_score))
    components = np.array(cc(n, [(a, b) for a, b, _ in pairs]))
    assert (components[labels] == components).all()  # never merges across components
    strong = {frozenset((a, b)) for a, b, s in pairs if s >= min_score}
    keepers = keepers_by_rank(labels, np.array(rank))
    for i in range(n):
        keep = keepers[labels[i]]
        assert keep == i or frozenset((i, keep)) in strong


# ── keep policy ──────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("text", "policy"),
    [
        ("first", KeepPolicy()),
        ("longest", KeepPolicy("longest")),
        (" shortest ", KeepPolicy("shortest")),
        ("field:date", KeepPolicy("field", "date", "max")),
        ("field:date:min", KeepPolicy("field", "date", "min")),
        ("field:date:max", KeepPolicy("field", "date", "max")),
        ("field:meta:date", KeepPolicy("field", "meta:date", "max")),
        ("field:meta:date:min", KeepPolicy("field", "meta:date", "min")),
    ],
)
def test_keep_policy_parse(text, policy):
    assert KeepPolicy.parse(text) == policy
    assert KeepPolicy.parse(str(policy)) == policy


@pytest.mark.parametrize(
    "text", ["", "last", "Longest", "field", "field:", "field::min", "longest:x", "first:"]
)
def test_keep_policy_parse_errors_name_the_value_and_the_forms(text):
    with pytest.raises(ConfigError) as info:
        KeepPolicy.parse(text)
    assert repr(text) in str(info.value)
    assert "field:NAME[:min|max]" in str(info.value)


def test_keep_policy_parse_rejects_non_strings():
    with pytest.raises(ConfigError):
        KeepPolicy.parse(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kind": "last"},
        {"kind": "field"},
        {"kind": "field", "field": ""},
        {"kind": "field", "field": "x", "direction": "up"},
        {"kind": "first", "field": "x"},
        {"kind": "longest", "direction": "min"},
    ],
)
def test_keep_policy_validates_on_construction(kwargs):
    with pytest.raises(ConfigError):
        KeepPolicy(**kwargs)


def test_keep_policy_is_frozen():
    with pytest.raises(AttributeError):
        KeepPolicy().kind = "longest"  # type: ignore[misc]


# ── keepers ──────────────────────────────────────────────────────────────────────────────────

# two clusters {0, 2, 4} and {1, 3}, and a singleton 5
LABELS = np.array([0, 1, 0, 1, 0, 5])


def keep(policy, **data):
    keepers = choose_keepers(LABELS, KeepPolicy.parse(policy), **data)
    return {int(label): int(keepers[label]) for label in np.unique(LABELS)}


def test_keep_first_follows_input_order_not_index():
    assert keep("first") == {0: 0, 1: 1, 5: 5}
    assert keep("first", order=np.array([5, 4, 3, 2, 1, 0])) == {0: 4, 1: 3, 5: 5}


def test_keep_longest_and_shortest_break_ties_by_input_order():
    lengths = np.array([10, 7, 30, 7, 30, 1])
    assert keep("longest", lengths=lengths) == {0: 2, 1: 1, 5: 5}
    assert keep("shortest", lengths=lengths) == {0: 0, 1: 1, 5: 5}
    order = np.array([0, 5, 4, 1, 2, 3])
    assert keep("longest", lengths=lengths, order=order) == {0: 4, 1: 3, 5: 5}


def test_keep_numeric_field_missing_values_lose():
    values = np.array([3.0, np.nan, 5.0, 2.0, np.nan, np.nan])
    assert keep("field:x", field_values=values) == {0: 2, 1: 3, 5: 5}
    assert keep("field:x:min", field_values=values) == {0: 0, 1: 3, 5: 5}
    ints = np.array([4, 9, 4, 9, 1, 0])
    assert keep("field:x:max", field_values=ints) == {0: 0, 1: 1, 5: 5}  # tie: first


def test_keep_string_and_object_fields():
    dates = np.array(["2021-01", None, "2023-05", "2020", None, "x"], dtype=object)
    assert keep("field:date", field_values=dates) == {0: 2, 1: 3, 5: 5}
    assert keep("field:date:min", field_values=dates) == {0: 0, 1: 3, 5: 5}
    numbers = np.array([1, 2.5, None, float("nan"), 7, None], dtype=object)
    assert keep("field:n:min", field_values=numbers) == {0: 0, 1: 1, 5: 5}
    fixed = np.array(["b", "a", "c", "b", "c", "z"])
    assert keep("field:s:max", field_values=fixed) == {0: 2, 1: 3, 5: 5}


def test_keep_field_all_missing_falls_back_to_input_order():
    values = np.array([None] * 6, dtype=object)
    assert keep("field:x", field_values=values, order=np.array([1, 0, 2, 3, 4, 5])) == {
        0: 0,
        1: 1,
        5: 5,
    }


def test_keep_field_mixing_strings_and_numbers_is_an_input_error():
    values = np.array(["a", 1, 2, 3, 4, 5], dtype=object)
    with pytest.raises(InputError, match="'x' mixes"):
        keep("field:x", field_values=values)


def test_keep_needs_its_data():
    with pytest.raises(ConfigError, match="lengths"):
        keep("longest")
    with pytest.raises(ConfigError, match="'x'"):
        keep("field:x")
    with pytest.raises(InputError, match="lengths"):
        keep("shortest", lengths=np.array([1, 2]))


@settings(max_examples=120, deadline=None)
@given(
    st.integers(1, 30).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, n - 1), min_size=n, max_size=n),
            st.permutations(range(n)),
            st.lists(st.integers(0, 4), min_size=n, max_size=n),
            st.lists(st.one_of(st.none(), st.integers(-3, 3)), min_size=n, max_size=n),
        )
    ),
    st.sampled_from(["first", "longest", "shortest", "field:f", "field:f:min"]),
)
def test_keepers_match_a_plain_reference(data, text):
    raw_labels, order, lengths, values = data
    n = len(raw_labels)
    labels = np.array(raw_labels)
    policy = KeepPolicy.parse(text)

    def key(d):
        if policy.kind == "first":
            return (order[d],)
        if policy.kind in ("longest", "shortest"):
            return (-lengths[d] if policy.kind == "longest" else lengths[d], order[d])
        missing = values[d] is None
        value = 0 if missing else (values[d] if policy.direction == "min" else -values[d])
        return (missing, value, order[d])

    keepers = choose_keepers(
        labels,
        policy,
        order=np.array(order),
        lengths=np.array(lengths),
        field_values=np.array(values, dtype=object),
    )
    for label in range(n):
        members = [d for d in range(n) if raw_labels[d] == label]
        assert keepers[label] == (min(members, key=key) if members else -1)


# ── outputs ──────────────────────────────────────────────────────────────────────────────────


def test_cluster_table_only_clusters_of_two_or_more_in_input_order():
    labels = np.array([0, 1, 0, 3, 1, 5, 0])
    order = np.array([6, 5, 4, 3, 2, 1, 0])
    keepers = choose_keepers(labels, KeepPolicy(), order=order)
    table = cluster_table(labels, keepers, order=order)
    assert isinstance(table, ClusterTable)
    assert len(table) == 2
    first, second = table
    assert isinstance(first, Cluster)
    assert (first.label, first.members.tolist(), first.keep) == (0, [6, 2, 0], 6)
    assert (second.label, second.members.tolist(), second.keep) == (1, [4, 1], 4)
    assert table.sizes.tolist() == [3, 2]
    assert table[-1].label == 1
    with pytest.raises(IndexError):
        table[2]


def test_cluster_table_default_order_and_empty():
    labels = np.array([0, 0, 2, 2, 2])
    keepers = choose_keepers(labels, KeepPolicy("longest"), lengths=np.array([1, 2, 3, 3, 1]))
    table = cluster_table(labels, keepers)
    assert [(c.label, c.members.tolist(), c.keep) for c in table] == [
        (0, [0, 1], 1),
        (2, [2, 3, 4], 2),
    ]
    singletons = np.arange(4)
    assert len(cluster_table(singletons, singletons)) == 0
    assert list(cluster_table(np.array([], dtype=np.int64), np.array([], dtype=np.int64))) == []


def test_removed_mask_keeps_one_per_cluster():
    labels = np.array([0, 1, 0, 3, 1, 5, 0])
    keepers = choose_keepers(
        labels, KeepPolicy("shortest"), lengths=np.array([5, 1, 2, 3, 1, 4, 2])
    )
    removed = removed_mask(labels, keepers)
    assert removed.tolist() == [True, False, False, False, True, False, True]
    assert (~removed).sum() == np.unique(labels).size


def test_removed_mask_and_table_reject_bad_arrays():
    with pytest.raises(InputError, match="keeper"):
        removed_mask(np.array([0, 0]), np.array([-1, -1]))
    with pytest.raises(InputError, match="labels"):
        removed_mask(np.array([0, 2]), np.array([0, 1]))
    with pytest.raises(InputError, match="keepers"):
        cluster_table(np.array([0, 0]), np.array([0]))


# ── scale ────────────────────────────────────────────────────────────────────────────────────


def propagation_labels(n, left, right):
    """Independent numpy reference: min-label propagation with pointer jumping."""
    labels = np.arange(n)
    while True:
        before = labels.copy()
        np.minimum.at(labels, left, labels[right])
        np.minimum.at(labels, right, labels[left])
        labels = labels[labels]
        if (labels == before).all():
            return labels


def test_scale_two_million_pairs_over_200k_documents():
    rng = np.random.default_rng(7)
    n, m = 200_000, 2_000_000
    # pairs inside hidden groups (many components), plus a sparse random background
    group = rng.integers(0, 60_000, n)
    by_group = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[by_group], np.arange(60_001))
    left = rng.integers(0, n, m)
    g = group[left]
    size = starts[g + 1] - starts[g]
    right = by_group[starts[g] + (rng.random(m) * size).astype(np.int64)]
    background = rng.random(m) < 0.002
    right[background] = rng.integers(0, n, background.sum())
    labels = connected_components(n, left, right)
    assert np.array_equal(labels, propagation_labels(n, left, right))
    sample = rng.integers(0, m, 10_000)
    assert (labels[left[sample]] == labels[right[sample]]).all()

    scores = rng.random(m)
    rank = preference_rank(KeepPolicy("longest"), n, lengths=rng.integers(0, 1000, n))
    guarded = star_clusters(n, left, right, scores, rank, 0.5)
    assert (labels[guarded] == labels).all()
    keeper_of = keepers_by_rank(guarded, rank)[guarded]
    strong = scores >= 0.5
    known = np.unique(
        np.r_[
            np.minimum(left, right)[strong] * n + np.maximum(left, right)[strong],
            np.arange(n) * (n + 1),  # a document matches itself
        ]
    )
    docs = rng.integers(0, n, 10_000)
    asked = np.minimum(docs, keeper_of[docs]) * n + np.maximum(docs, keeper_of[docs])
    assert np.isin(asked, known).all()
    assert (
        removed_mask(guarded, keepers_by_rank(guarded, rank)).sum() == n - np.unique(guarded).size
    )


def test_pairs_to_keepers_proposes_the_keepers_of_what_holds_a_document():
    from neardup.dedup.cluster import pairs_to_keepers

    # 1 and 2 hold each other and 0; 0 is held by the keepers 2 and 3; 4 only weakly by 2
    left = np.array([0, 0, 0, 2])
    right = np.array([1, 2, 3, 4])
    s_lr = np.array([0.9, 0.9, 0.95, 0.1])  # left in right
    s_rl = np.array([0.9, 0.9, 0.2, 0.3])  # right in left
    keep_of = np.array([3, 1, 2, 3, 4])
    lo, hi = pairs_to_keepers(left, right, s_lr, s_rl, keep_of, 0.6)
    assert sorted(zip(lo.tolist(), hi.tolist(), strict=True)) == [(1, 2), (1, 3), (2, 3)]
    # nothing new once every such pair is known
    left2 = np.r_[left, lo]
    right2 = np.r_[right, hi]
    lo, hi = pairs_to_keepers(
        left2, right2, np.r_[s_lr, 0.9, 0.9, 0.9], np.r_[s_rl, 0.5, 0.5, 0.5], keep_of, 0.6
    )
    assert lo.size == 0
