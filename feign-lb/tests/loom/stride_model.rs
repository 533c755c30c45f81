//! The weighted round robin's compare-and-swap (`Stride::next`): picks made at once claim the
//! schedule's next positions, each once; none is skipped or taken twice, and the schedule goes
//! on from where they left it, as if they had been made one after another.

use loom::thread;

use crate::stride::Stride;
use crate::support::check;

/// Weights 2, 1, 1: the heavier member is picked twice a round.
const WEIGHTS: [f64; 3] = [2.0, 1.0, 1.0];

fn stride() -> Stride {
    Stride::new(&[0, 1, 2], &WEIGHTS, (0, 0)).expect("unequal weights")
}

/// Three picks at once take the same three positions three picks in a row take, and the fourth
/// pick is the fourth of the schedule.
#[test]
fn concurrent_picks_claim_the_schedule_once_each() {
    check(3, || {
        let mut expected: Vec<usize> = {
            let stride = stride();
            (0..4).map(|_| stride.next()).collect()
        };
        let fourth = expected.pop().expect("four picks");
        expected.sort_unstable();
        let stride = loom::sync::Arc::new(stride());
        let pickers: Vec<_> = (0..3)
            .map(|_| {
                let stride = stride.clone();
                thread::spawn(move || stride.next())
            })
            .collect();
        let mut picked: Vec<usize> = pickers.into_iter().map(|p| p.join().unwrap()).collect();
        picked.sort_unstable();
        assert_eq!(picked, expected, "positions skipped or taken twice");
        assert_eq!(stride.next(), fourth, "the schedule went on from elsewhere");
    });
}
