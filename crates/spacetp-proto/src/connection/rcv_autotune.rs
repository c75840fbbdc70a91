//! Linux's receive-buffer autotuning (`receive_autotuning`), as `net/ipv4/tcp_input.c` of a
//! 6.x kernel does it. The advertised window is min(rcv_ssthresh, the window the receive
//! buffer can hold), and both grow during a transfer:
//! - `rcv_ssthresh` by twice the segment size for each in-order data segment while there is
//!   room below the buffer's window (`tcp_grow_window`); each such growth asks for an
//!   immediate ACK (`icsk_ack.quick |= 1`), so a Linux receiver ACKs every segment while its
//!   window opens, and every second one only once it has stopped opening;
//! - the buffer itself once per receiver-measured round trip, to about twice what the
//!   application read in the last one, more while that doubles (dynamic right-sizing:
//!   `tcp_rcv_space_adjust`, `tcp_rcvbuf_grow`), up to the ceiling `receive_buffer`
//!   (`tcp_rmem[2]`).
//!
//! The receiver's round trip is measured from the timestamps it echoes (`tcp_rcv_rtt_measure_ts`,
//! a 1/8 moving average) or, without timestamps, as the time to receive one window
//! (`tcp_rcv_rtt_measure`, a minimum).
//!
//! Buffer bytes are memory, not payload: Linux converts with the ratio of payload to the
//! socket buffer's true size (`scaling_ratio`): 1/2 until data has arrived, then what the
//! device gives. 5/8 is a 1448-byte segment in a 2304-byte buffer, which is what this
//! machine's TUN device gives (measured: an 80.9 KB window from the 128 KiB initial buffer).

use crate::time::Time;

/// `TCP_DEFAULT_SCALING_RATIO`: payload per buffer byte before any data has arrived.
const INITIAL_RATIO: f64 = 0.5;
/// Payload per buffer byte once data has arrived (a full segment in a 2304-byte buffer).
const DATA_RATIO: f64 = 0.625;
/// `TCP_INIT_CWND`: the first measure of what one round trip reads (`rcvq_space.space`).
const INIT_CWND: u64 = 10;
/// `tcp_grow_window` is called for segments of at least this many bytes.
const GROW_MIN_LEN: u32 = 128;

#[derive(Debug)]
pub(crate) struct RcvAutotune {
    /// `sk_rcvbuf` (bytes of memory) and its ceiling, `tcp_rmem[2]`.
    rcvbuf: u64,
    ceiling: u64,
    ratio: f64,
    /// `window_clamp`: the most the window may reach with this buffer, the buffer's window
    /// `win_from_space(rcvbuf)`; set wherever `rcvbuf` or `ratio` changes, so that the
    /// per-segment paths read it instead of converting (two float conversions per read).
    clamp: u64,
    rcv_ssthresh: u64,
    mss: u64,
    /// The largest data segment received (`icsk_ack.rcv_mss`: options make it less than
    /// the MSS).
    rcv_mss: u32,
    /// `rcvq_space`: what the application read in the last measured round trip, and where
    /// and when the current measure began.
    space: u64,
    space_seq: u64,
    space_time: Option<Time>,
    /// `rcv_rtt_est`: the receiver's round-trip estimate, and the window-based measure's
    /// end position and start time.
    rtt: Option<Time>,
    last_tsecr: Option<u32>,
    rtt_seq: u64,
    rtt_time: Option<Time>,
}

impl RcvAutotune {
    /// `initial`: `tcp_rmem[1]`; `ceiling`: `tcp_rmem[2]`.
    pub fn new(initial: u64, ceiling: u64, mss: u64) -> Self {
        let mut a = RcvAutotune {
            rcvbuf: initial,
            ceiling,
            ratio: INITIAL_RATIO,
            clamp: 0,
            rcv_ssthresh: 0,
            mss: mss.max(1),
            rcv_mss: 0,
            space: 0,
            space_seq: 0,
            space_time: None,
            rtt: None,
            last_tsecr: None,
            rtt_seq: 0,
            rtt_time: None,
        };
        a.set_mss(mss);
        a
    }

    /// The window offered in the SYN (`tcp_select_initial_window`: the initial buffer's
    /// window in whole segments) is where rcv_ssthresh starts.
    pub fn set_mss(&mut self, mss: u64) {
        self.mss = mss.max(1);
        self.clamp = self.win_from_space(self.rcvbuf);
        let initial = self.clamp / self.mss * self.mss;
        self.rcv_ssthresh = initial.max(self.mss);
        self.space = initial.min(INIT_CWND * self.mss);
    }

    fn win_from_space(&self, space: u64) -> u64 {
        (space as f64 * self.ratio) as u64
    }

    /// The most the window may be now: min(rcv_ssthresh, the buffer's window).
    pub fn limit(&self) -> u64 {
        self.rcv_ssthresh.min(self.clamp)
    }

    /// An in-order data segment of `len` bytes arrived with `unread` bytes waiting for the
    /// application. Returns whether the window grew, so the ACK should go at once.
    pub fn on_in_order_data(&mut self, len: u32, unread: u64) -> bool {
        if self.ratio != DATA_RATIO {
            // The first data teaches Linux its payload ratio (`tcp_measure_rcv_mss`).
            self.ratio = DATA_RATIO;
            self.clamp = self.win_from_space(self.rcvbuf);
            self.space = self.space.min(self.clamp);
        }
        self.rcv_mss = self.rcv_mss.max(len);
        if len < GROW_MIN_LEN {
            return false;
        }
        let space = self.clamp.saturating_sub(unread);
        let room = space.saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        let incr = (2 * self.mss).max(2 * len as u64);
        self.rcv_ssthresh += room.min(incr);
        true
    }

    /// A data segment of `len` bytes arrived at `now` echoing our timestamp `tsecr` (our
    /// clock in ms when we sent it): a round-trip sample (`tcp_rcv_rtt_measure_ts`), taken
    /// once per echoed value, from full segments (as large as any received before).
    pub fn on_echoed_timestamp(&mut self, now: Time, tsecr: u32, len: u32) {
        let sent = tsecr as Time * crate::time::MS;
        if len == 0 || sent > now || self.last_tsecr == Some(tsecr) {
            return;
        }
        let sample = now - sent;
        self.last_tsecr = Some(tsecr);
        if self.rcv_mss > 0 && len >= self.rcv_mss && sample > 0 {
            // `tcp_rcv_rtt_update` with timestamps: a lower sample is taken at once, a higher
            // one moves the estimate by 1/8.
            self.rtt = Some(match self.rtt {
                Some(r) if sample >= r => r - r / 8 + sample / 8,
                _ => sample,
            });
        }
    }

    /// Without timestamps: the time to receive one window is a round trip at most
    /// (`tcp_rcv_rtt_measure`, keeping the minimum).
    pub fn on_window_progress(&mut self, now: Time, rcv_nxt: u64, window: u64) {
        if let Some(t) = self.rtt_time {
            if rcv_nxt < self.rtt_seq {
                return;
            }
            let sample = now - t;
            if sample > 0 {
                self.rtt = Some(self.rtt.map_or(sample, |r| r.min(sample)));
            }
        }
        self.rtt_seq = rcv_nxt + window;
        self.rtt_time = Some(now);
    }

    /// The application has read `delivered` bytes in all (`tcp_rcv_space_adjust`, run on
    /// every read): once a round trip has passed, a buffer for about twice what it read.
    /// `ooo` is how far out-of-order data reaches beyond rcv_nxt.
    pub fn on_read(&mut self, now: Time, delivered: u64, ooo: u64) {
        // The first measure starts with the first data (Linux: at the handshake's end, when
        // the first data follows).
        let start = *self.space_time.get_or_insert(now);
        let Some(rtt) = self.rtt else { return };
        if now - start < rtt {
            return;
        }
        let copied = delivered - self.space_seq;
        if copied > self.space {
            self.grow(copied, ooo);
        }
        self.space_seq = delivered;
        self.space_time = Some(now);
    }

    /// `tcp_rcvbuf_grow`: DRS is one round trip late, so twice what was read, and while the
    /// reads grow (slow start), room for the sender to double again.
    fn grow(&mut self, copied: u64, ooo: u64) {
        let old = self.space.max(1);
        self.space = copied;
        let mut rcvwin = 2 * copied;
        rcvwin += 2 * rcvwin * (copied - old) / old;
        rcvwin += ooo;
        let rcvbuf = ((rcvwin as f64 / self.ratio) as u64).min(self.ceiling);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.clamp = self.win_from_space(rcvbuf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    const MSS: u64 = 1448;

    fn linux_default() -> RcvAutotune {
        RcvAutotune::new(131_072, 6_291_456, MSS)
    }

    #[test]
    fn the_syn_offers_the_initial_buffers_window_in_whole_segments() {
        // tcp_rmem[1] = 128 KiB at ratio 1/2 is 64 KiB: 45 segments of 1448 = 65160 B, the
        // window a Linux receiver puts in its SYN-ACK.
        assert_eq!(linux_default().limit(), 65_160);
    }

    #[test]
    fn the_window_grows_two_segments_per_segment_up_to_the_buffers_window() {
        let mut a = linux_default();
        assert!(a.on_in_order_data(1448, 0));
        assert_eq!(a.limit(), 65_160 + 2 * 1448);
        for _ in 0..100 {
            a.on_in_order_data(1448, 0);
        }
        // Capped by 128 KiB at 5/8: 81920 B; and no more immediate ACKs once there.
        assert_eq!(a.limit(), 81_920);
        assert!(!a.on_in_order_data(1448, 0));
        assert!(!a.on_in_order_data(100, 0), "small segments never grow it");
    }

    #[test]
    fn a_round_trip_of_reads_sizes_the_buffer_for_twice_what_was_read_and_more_in_slow_start() {
        let mut a = linux_default();
        a.on_read(0, 0, 0);
        a.on_in_order_data(1448, 0);
        a.on_echoed_timestamp(600 * MS + 7 * MS, 7, 1448);
        // Half a round trip: nothing yet.
        a.on_read(300 * MS, 20 * MSS, 0);
        assert_eq!(a.limit(), 65_160 + 2 * 1448);
        // One round trip, 20 segments read against the initial 10: rcvwin = 2 x 20 +
        // 2 x 40 x (20 - 10) / 10 = 120 segments of window.
        a.on_read(600 * MS, 20 * MSS, 0);
        for _ in 0..200 {
            a.on_in_order_data(1448, 0);
        }
        let want = ((120 * MSS) as f64 / DATA_RATIO) as u64;
        assert_eq!(a.rcvbuf, want);
        assert_eq!(a.limit(), a.win_from_space(want));
    }

    /// `limit` and the growth read `clamp` for the buffer's window: it must follow every
    /// change of the buffer and of the ratio.
    #[test]
    fn the_clamp_is_the_buffers_window_after_every_change() {
        let mut a = linux_default();
        let check = |a: &RcvAutotune| assert_eq!(a.clamp, a.win_from_space(a.rcvbuf));
        check(&a);
        a.on_read(0, 0, 0);
        a.on_in_order_data(1448, 0);
        check(&a);
        a.on_echoed_timestamp(101 * MS, 1, 1448);
        for (i, read) in [10, 40, 200, 900, 5000].into_iter().enumerate() {
            a.on_read((i as Time + 1) * 200 * MS, read * MSS, 3 * MSS);
            a.on_in_order_data(1448, 5 * MSS);
            check(&a);
        }
        a.set_mss(1000);
        check(&a);
    }

    #[test]
    fn the_buffer_never_exceeds_its_ceiling() {
        let mut a = RcvAutotune::new(131_072, 200_000, MSS);
        a.on_read(0, 0, 0);
        a.on_in_order_data(1448, 0);
        a.on_echoed_timestamp(101 * MS, 1, 1448);
        a.on_read(100 * MS, 1000 * MSS, 0);
        assert_eq!(a.rcvbuf, 200_000);
    }

    #[test]
    fn a_timestamp_echoed_twice_is_one_sample() {
        let mut a = linux_default();
        a.on_in_order_data(1448, 0);
        a.on_echoed_timestamp(800 * MS + 5 * MS, 5, 1448);
        a.on_echoed_timestamp(1600 * MS + 5 * MS, 5, 1448);
        assert_eq!(a.rtt, Some(800 * MS));
        a.on_echoed_timestamp(1600 * MS + 6 * MS, 6, 1448);
        assert_eq!(
            a.rtt,
            Some(900 * MS),
            "a higher sample: a 1/8 moving average"
        );
        a.on_echoed_timestamp(600 * MS + 7 * MS, 7, 1448);
        assert_eq!(a.rtt, Some(600 * MS), "a lower sample is taken at once");
    }
}
