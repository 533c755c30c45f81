//! `CopyOnWriteMap`: a reader sees the map before or after an insert, and no insert is lost to a
//! concurrent one (each copies the map it loaded, so two unserialized inserts would each drop
//! the other's key).

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

use crate::check;
use crate::cow_map::CopyOnWriteMap;

type Map = CopyOnWriteMap<&'static str, u32>;

/// Reads `key`, which must be there already: making it again would mean it was lost.
fn present(map: &Map, key: &'static str) -> u32 {
    map.with(key, || panic!("{key} was lost"), |v| *v)
}

/// Two threads insert different keys while a third reads one inserted before: afterwards both
/// keys are there, each made once, and the reader always found the older key with its value.
#[test]
fn concurrent_inserts_are_never_lost() {
    check(3, || {
        let map = Arc::new(Map::new());
        map.with("a", || 1, |_| ());
        let made = Arc::new(AtomicUsize::new(0));
        let inserters: Vec<_> = [("b", 2), ("c", 3)]
            .into_iter()
            .map(|(key, value)| {
                let (map, made) = (map.clone(), made.clone());
                thread::spawn(move || {
                    let make = || {
                        made.fetch_add(1, Ordering::Relaxed);
                        value
                    };
                    assert_eq!(map.with(key, make, |v| *v), value);
                })
            })
            .collect();
        let reader = {
            let map = map.clone();
            thread::spawn(move || assert_eq!(present(&map, "a"), 1))
        };
        for t in inserters {
            t.join().unwrap();
        }
        reader.join().unwrap();
        assert_eq!(made.load(Ordering::Relaxed), 2);
        assert_eq!(
            [present(&map, "a"), present(&map, "b"), present(&map, "c")],
            [1, 2, 3]
        );
    });
}

/// Two threads race to insert the same key: its value is made once, and both read that one.
#[test]
fn a_key_raced_for_is_made_once() {
    check(3, || {
        let map = Arc::new(Map::new());
        let made = Arc::new(AtomicUsize::new(0));
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let (map, made) = (map.clone(), made.clone());
                thread::spawn(move || {
                    let make = || made.fetch_add(1, Ordering::Relaxed) as u32 + 10;
                    map.with("k", make, |v| *v)
                })
            })
            .collect();
        let seen: Vec<u32> = racers.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(made.load(Ordering::Relaxed), 1);
        assert_eq!(seen, [10, 10]);
        assert_eq!(present(&map, "k"), 10);
    });
}

/// Sequentially: each value is made once, later reads find it.
#[test]
fn makes_each_value_once() {
    check(0, || {
        let map = Map::new();
        let made = AtomicUsize::new(0);
        let make = || {
            made.fetch_add(1, Ordering::Relaxed);
            7
        };
        for _ in 0..3 {
            assert_eq!(map.with("a", make, |v| *v), 7);
        }
        assert_eq!(map.with("b", || 9, |v| *v), 9);
        assert_eq!(present(&map, "a"), 7);
        assert_eq!(made.load(Ordering::Relaxed), 1);
    });
}
