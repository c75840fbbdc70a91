//! Link-state notices (`link down`, `link up`, from the emulator or a modem manager): every
//! SCPS-TP connection to persist mode during an outage, resumed at once after it.

use super::*;

impl Gateway {
    /// Take link-state notices from datagram fd `fd` (owned by the caller): each
    /// `link down` puts every SCPS-TP connection in persist mode (no retransmission
    /// timeouts, one probe per RTO), each `link up` resumes it at once, as in the simulator.
    pub fn set_link_state_fd(&mut self, fd: RawFd) -> Result<(), LiveError> {
        crate::sys::set_nonblocking(fd)?;
        self.link_state = Some(fd);
        Ok(())
    }

    pub(super) fn read_link_state(&mut self, now: Time) {
        let Some(fd) = self.link_state else { return };
        while let Some(up) = crate::emulator::next_link_notice(fd) {
            self.link_down = !up;
            for f in self.flows.values_mut() {
                if up {
                    f.conn.on_link_restored(now);
                    // Silence during the outage says nothing about the peer.
                    f.last_heard = now;
                    f.probes = 0;
                } else {
                    f.conn.on_link_outage(now);
                }
            }
            if up {
                self.rep.link_up_notices += 1;
            } else {
                self.rep.link_down_notices += 1;
            }
        }
    }
}
