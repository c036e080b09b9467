//! The explorer's enumerator, checked on its own, on runs whose schedules
//! can be counted by hand. These are plain functions, not tests: every test
//! of this binary must fail against the stubs, and these know nothing of
//! the exercises. The explorer's claims (L1.3, L4.10) call
//! [`check_the_enumerator`] before they trust an exploration, so a broken
//! enumerator stops them with a message about the harness, never about the
//! learner's code.

use fencing_lab::explore::enumerate::{Chooser, DepthFirst};

/// Every schedule of `run`, each as the list of choices it made.
fn schedules(mut run: impl FnMut(&Chooser) -> Vec<usize>) -> Vec<Vec<usize>> {
    let mut enumeration = DepthFirst::new();
    let chooser = enumeration.chooser();
    let mut found = Vec::new();
    while enumeration.next_schedule() {
        found.push(run(&chooser));
        assert!(found.len() < 1000, "the enumerator does not end");
    }
    found
}

/// Two actors with `a` and `b` steps: at each step, which of those with
/// steps left moves next. Each schedule is the order of the actors (0, 1).
fn interleavings(a: usize, b: usize) -> Vec<Vec<usize>> {
    schedules(|chooser| {
        let mut left = [a, b];
        let mut order = Vec::new();
        loop {
            let ready: Vec<usize> = (0..2).filter(|&actor| left[actor] > 0).collect();
            if ready.is_empty() {
                return order;
            }
            let actor = ready[chooser.choose(ready.len())];
            left[actor] -= 1;
            order.push(actor);
        }
    })
}

/// Panics, naming the harness, if the enumerator misses a schedule, runs one
/// twice, or leaves its depth-first order.
pub fn check_the_enumerator() {
    let harness = "the explorer's enumerator (src/explore/enumerate.rs, part of the harness)";

    // A run that makes no choice is one schedule.
    let none = schedules(|_| Vec::new());
    assert_eq!(
        none.len(),
        1,
        "{harness}: a run with no choice is one schedule"
    );

    // Two actors of two steps each: 4!/(2!2!) = 6 orders, each once, in
    // depth-first order (the first option first, the last choice first to
    // move on).
    let orders = interleavings(2, 2);
    let expected: Vec<Vec<usize>> = [
        [0, 0, 1, 1],
        [0, 1, 0, 1],
        [0, 1, 1, 0],
        [1, 0, 0, 1],
        [1, 0, 1, 0],
        [1, 1, 0, 0],
    ]
    .iter()
    .map(|order| order.to_vec())
    .collect();
    assert_eq!(orders, expected, "{harness}: the 6 orders of 2+2 steps");

    // 3 and 2 steps: 5!/(3!2!) = 10, all different.
    let mut orders = interleavings(3, 2);
    orders.sort();
    orders.dedup();
    assert_eq!(orders.len(), 10, "{harness}: the 10 orders of 3+2 steps");

    // A choice that exists only on some branches (as a checkpoint is
    // reached only by some calls): 3 options, and a second choice of 2 only
    // after option 1 or 2, so 1 + 2 + 2 = 5 schedules.
    let branching = schedules(|chooser| {
        let first = chooser.choose(3);
        match first {
            0 => vec![first],
            _ => vec![first, chooser.choose(2)],
        }
    });
    assert_eq!(
        branching,
        vec![vec![0], vec![1, 0], vec![1, 1], vec![2, 0], vec![2, 1]],
        "{harness}: choices that exist on some branches only"
    );
}
