//! What must hold of a connection after any input, checked by the fuzzer
//! ([`crate::fuzzing`]) after every operation. A broken invariant is a bug in the
//! connection whatever the peer (or an attacker) sent.

use super::{Connection, State};

impl Connection {
    /// Ok, or the first invariant that does not hold.
    #[doc(hidden)]
    pub fn check_invariants(&self) -> Result<(), String> {
        let fail = |what: &str| Err(format!("{what} (state {:?})", self.state));
        // Sequence space: nothing acknowledged beyond what was sent, nothing sent beyond
        // what was written (plus SYN and FIN).
        if self.snd_una > self.snd_max {
            return fail(&format!(
                "snd_una {} > snd_max {}",
                self.snd_una, self.snd_max
            ));
        }
        if self.snd_nxt > self.snd_max {
            return fail(&format!(
                "snd_nxt {} > snd_max {}",
                self.snd_nxt, self.snd_max
            ));
        }
        let fin = self.app_closed as u64;
        if self.snd_max > self.data_end + fin {
            return fail(&format!(
                "snd_max {} beyond the data written (end {}, FIN {fin})",
                self.snd_max, self.data_end
            ));
        }
        if self.data_end - self.snd_una.clamp(1, self.data_end) > self.cfg.send_buffer.0 {
            return fail("more data buffered than the send buffer holds");
        }
        // The window: a controller never leaves cwnd or the MSS at zero.
        if self.win.cwnd == 0 || self.win.mss == 0 {
            return fail(&format!("cwnd {} mss {}", self.win.cwnd, self.win.mss));
        }
        // The SACK scoreboard holds sorted, disjoint ranges above snd_una within snd_max.
        self.board
            .check(self.snd_una, self.snd_max)
            .or_else(|e| fail(&format!("scoreboard: {e}")))?;
        // The receiver: nothing readable beyond what arrived in order, and the advertised
        // window never above the buffer.
        self.rx
            .check()
            .or_else(|e| fail(&format!("receiver: {e}")))?;
        if self.state == State::Closed && self.poll_timeout().is_some() {
            return fail("a closed connection has a timer");
        }
        Ok(())
    }
}
