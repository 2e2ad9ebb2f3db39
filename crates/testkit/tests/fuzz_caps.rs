//! The fuzz harness's caps fail an input that grows the heap or runs too long.

use disktier_testkit::fuzz::{bounded_by, serial, CappedAlloc, TIME_PER_INPUT};

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc::new(256 << 20);

#[test]
#[should_panic(expected = "grew the heap")]
fn an_input_that_allocates_too_much_fails() {
    let _g = serial();
    bounded_by(&ALLOC, 1 << 20, || {
        let v = vec![1u8; 8 << 20];
        assert_eq!(v.len(), 8 << 20);
    });
}

#[test]
fn an_input_within_its_memory_passes() {
    let _g = serial();
    bounded_by(&ALLOC, 16 << 20, || {
        let v = vec![1u8; 1 << 20];
        assert_eq!(v.len(), 1 << 20);
    });
}

#[test]
#[should_panic(expected = "one input took")]
fn an_input_that_takes_too_long_fails() {
    let _g = serial();
    bounded_by(&ALLOC, 1 << 20, || {
        std::thread::sleep(TIME_PER_INPUT + std::time::Duration::from_millis(100))
    });
}

#[test]
fn the_heap_limit_refuses_one_huge_allocation() {
    // What a parser's `Vec::with_capacity(len_from_input)` would ask for; try_reserve sees
    // the allocator's refusal instead of aborting.
    let mut v: Vec<u8> = Vec::new();
    assert!(
        v.try_reserve(1 << 30).is_err(),
        "1 GiB is above the 256 MiB limit"
    );
    assert!(ALLOC.live() < ALLOC.limit());
}
