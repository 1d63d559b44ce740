"""Kafka's UniformHeterogeneousAssignmentBuilder.MemberAssignmentBalancer (KAFKA-17710).

Given one topic's subscribers, hands out "the least loaded member" to give a partition to and
"the most loaded member" to take one from, in constant time per step, keeping two ranges over
the subscribers sorted by (assignment size, member index):

    least loaded range [0, least_end): members at the lowest level, filled round robin; when
        each got one, the level rises by one and members now at that level join the range.
    most loaded range [most_start, most_end): the mirror image, shrinking from the top;
        `exclude_most_loaded` drops a member that has nothing of the topic left to give.

The sizes list is the builder's own and is read live, as in Kafka. Done when the two levels
differ by at most one (`is_balanced`).
"""

from __future__ import annotations


class MemberBalancer:
    def __init__(self, sizes: list[int]) -> None:
        self._sizes = sizes
        self._sorted: list[int] = []
        self._least_end = 0  # exclusive
        self._least_count = -1  # level of the least loaded range before it got partitions
        self._next_least = 0
        self._most_start = 0  # inclusive
        self._most_end = 0  # exclusive
        self._most_count = 1  # level of the most loaded range before it gave partitions
        self._next_most = -1

    def initialize(self, members: list[int]) -> int:
        """Start over with these members (in ascending index order); returns the largest minus
        the smallest size."""
        if not members:
            raise ValueError("Cannot balance an empty subscriber list.")
        sizes = self._sizes
        # Kafka sorts by (size, member index); the input is ascending and the sort stable.
        ordered = self._sorted = sorted(members, key=sizes.__getitem__)
        self._least_end = 0
        self._least_count = sizes[ordered[0]] - 1
        self._next_least = 0
        self._most_start = self._most_end = len(ordered)
        self._most_count = sizes[ordered[-1]] + 1
        self._next_most = len(ordered) - 1
        return sizes[ordered[-1]] - sizes[ordered[0]]

    def next_least_loaded(self) -> int:
        """The member to give the next partition to (assumes it will get it)."""
        ordered, sizes = self._sorted, self._sizes
        if self._next_least >= self._least_end:
            # Everyone in the range got one: raise its level and take in the members now level.
            self._least_count += 1
            while self._least_end < len(ordered) and sizes[ordered[self._least_end]] == self._least_count:
                self._least_end += 1
            self._next_least = 0
        member = ordered[self._next_least]
        self._next_least += 1
        return member

    def next_most_loaded(self) -> int:
        """The member to take the next partition from, or -1 if nobody is left to give one."""
        ordered, sizes = self._sorted, self._sizes
        if self._next_most < self._most_start:
            if self._most_end <= self._most_start and self._most_start > 0:
                # The range is empty (members were excluded): restart from the next level down,
                # so that the range surely expands below.
                self._most_count = sizes[ordered[self._most_start - 1]]
            else:
                self._most_count -= 1
            while self._most_start > 0 and sizes[ordered[self._most_start - 1]] == self._most_count:
                self._most_start -= 1
            self._next_most = self._most_end - 1
        if self._next_most < 0:
            return -1
        member = ordered[self._next_most]
        self._next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        """Drop the member `next_most_loaded` just returned from the most loaded range."""
        ordered = self._sorted
        i, last = self._next_most + 1, self._most_end - 1
        ordered[i], ordered[last] = ordered[last], ordered[i]
        self._most_end -= 1

    def is_balanced(self) -> bool:
        return self._most_count - self._least_count <= 1
