//! No heap allocation per packet on the hot path: a transfer four times longer must not make
//! many more allocations (a counting global allocator measures them).

mod common;
use common::{flow_a_to_b, hosts_a_b};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn allocations_for(bytes: &str, protocol: &str) -> (u64, u64) {
    let toml = hosts_a_b("", "10 Mb/s", "20 ms", "errors = { per = 0.001 }")
        + &flow_a_to_b(&format!("bytes = \"{bytes}\"\nprotocol = \"{protocol}\""));
    let sc = spacetp_sim::scenario_from_toml(&toml).unwrap();
    let before = ALLOCS.load(Ordering::Relaxed);
    let out = spacetp_sim::run(sc, &spacetp_sim::RunOptions::default()).unwrap();
    let n = ALLOCS.load(Ordering::Relaxed) - before;
    assert!(out.summary.flows[0].complete);
    (
        n,
        out.summary.links[0].tx_packets + out.summary.links[1].tx_packets,
    )
}

#[test]
fn allocations_do_not_grow_with_packets() {
    // newreno; scps-1c adds SNACK and SCPS header compression on every packet.
    for protocol in ["newreno", "scps-1c"] {
        allocations_stay_flat(protocol);
    }
}

fn allocations_stay_flat(protocol: &str) {
    let (small, p_small) = allocations_for("5 MB", protocol);
    let (large, p_large) = allocations_for("20 MB", protocol);
    assert!(p_large > 3 * p_small);
    // Growth of buffers to their peak is amortised (log n); a per-packet allocation would add
    // at least (p_large - p_small) allocations.
    eprintln!("{protocol}: {small} allocations for {p_small} packets, {large} for {p_large}");
    let extra = large.saturating_sub(small);
    assert!(
        extra * 20 < p_large - p_small,
        "{protocol}: {small} allocations for {p_small} packets, {large} for {p_large}"
    );
}
