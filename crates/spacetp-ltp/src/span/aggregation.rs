//! Blocks and the aggregation of SDUs into them, as ION's ltp_send and ltpclock do: SDUs
//! for a span are appended to the open block until it reaches `aggregation_size_limit`
//! or `aggregation_time_limit` has passed since its first SDU; an SDU with any green data
//! closes its block at once (only all-red SDUs aggregate). A closed block waits for a free
//! export session, except an all-green block, which needs none (ION's
//! sduCanBeAppendedToBlock: the session window limits red data only).
//!
//! One difference from ION, on purpose: an SDU for another client service closes the open
//! block at once, where ION makes the SDU wait until the block closes by size or time
//! (a sans-IO engine has no caller to block; the order of SDUs is kept either way).

use bytes::Bytes;
use spacetp_proto::Time;

use crate::shared::Shared;
use crate::span::Span;
use crate::timer::TimerRef;

/// A block: the SDUs it aggregates, kept as the client gave them (no copy), and how much
/// of it is red.
#[derive(Clone, Debug)]
pub(crate) struct Block {
    pub client_service_id: u64,
    pub sdus: Vec<Bytes>,
    /// The offset of each SDU in the block.
    pub starts: Vec<u64>,
    pub len: u64,
    pub red_len: u64,
}

impl Block {
    fn new(client_service_id: u64) -> Self {
        Block {
            client_service_id,
            sdus: Vec::new(),
            starts: Vec::new(),
            len: 0,
            red_len: 0,
        }
    }

    fn push(&mut self, data: Bytes, red_len: u64) {
        self.starts.push(self.len);
        self.len += data.len() as u64;
        self.red_len += red_len;
        self.sdus.push(data);
    }

    /// Appends bytes `[start, end)` of the block to `out`.
    pub fn copy_range(&self, start: u64, end: u64, out: &mut Vec<u8>) {
        let mut i = self
            .starts
            .partition_point(|&s| s <= start)
            .saturating_sub(1);
        let mut at = start;
        while at < end && i < self.sdus.len() {
            let s = self.starts[i];
            let sdu = &self.sdus[i];
            let from = (at - s) as usize;
            let to = ((end - s) as usize).min(sdu.len());
            if from < to {
                out.extend_from_slice(&sdu[from..to]);
                at = s + to as u64;
            }
            i += 1;
        }
    }
}

/// The block SDUs are being appended to.
#[derive(Debug)]
pub(crate) struct OpenBlock {
    pub id: u64,
    pub block: Block,
}

impl Span {
    /// Appends an SDU to the span's open block (opening one if needed) and closes the block
    /// when it is full, has green data, or the SDU is for another client service.
    pub(crate) fn append_sdu(
        &mut self,
        sh: &mut Shared,
        now: Time,
        client_service_id: u64,
        data: Bytes,
        red_len: u64,
    ) {
        self.stats.sdus_sent += 1;
        if self
            .agg
            .as_ref()
            .is_some_and(|o| o.block.client_service_id != client_service_id)
        {
            self.close_block(sh, now);
        }
        let open = match &mut self.agg {
            Some(o) => o,
            None => {
                let id = self.next_block_id;
                self.next_block_id += 1;
                sh.timers.push(
                    now + self.cfg.aggregation_time_limit.0,
                    TimerRef::Aggregation {
                        peer: self.peer,
                        block: id,
                    },
                );
                self.agg.insert(OpenBlock {
                    id,
                    block: Block::new(client_service_id),
                })
            }
        };
        let has_green = red_len < data.len() as u64;
        open.block.push(data, red_len);
        if has_green || open.block.len >= self.cfg.aggregation_size_limit.0 {
            self.close_block(sh, now);
        }
    }

    /// The aggregation time limit of block `id` has passed.
    pub(crate) fn on_aggregation_timer(&mut self, sh: &mut Shared, now: Time, id: u64) {
        if self.agg.as_ref().is_some_and(|o| o.id == id) {
            self.close_block(sh, now);
        }
    }

    fn close_block(&mut self, sh: &mut Shared, now: Time) {
        let Some(open) = self.agg.take() else {
            return;
        };
        self.stats.blocks_exported += 1;
        if open.block.red_len == 0 {
            self.start_export(sh, open.block, 0);
        } else {
            self.waiting.push_back((open.block, now));
            self.start_waiting(sh, now);
        }
    }

    /// Gives free export sessions to the blocks that wait for one, oldest first.
    pub(crate) fn start_waiting(&mut self, sh: &mut Shared, now: Time) {
        while self.open_exports < self.cfg.max_export_sessions {
            let Some((block, closed_at)) = self.waiting.pop_front() else {
                break;
            };
            let waited = now - closed_at;
            if waited > 0 {
                self.stats.blocks_waited_for_session += 1;
                self.stats.session_wait_total += waited;
                self.stats.session_wait_max = self.stats.session_wait_max.max(waited);
            }
            self.start_export(sh, block, waited);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_copied_across_sdu_boundaries() {
        let mut b = Block::new(1);
        b.push(Bytes::from_static(b"abc"), 3);
        b.push(Bytes::from_static(b"defg"), 4);
        b.push(Bytes::from_static(b"h"), 1);
        let read = |s, e| {
            let mut out = Vec::new();
            b.copy_range(s, e, &mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(read(0, 8), "abcdefgh");
        assert_eq!(read(2, 5), "cde");
        assert_eq!(read(3, 7), "defg");
        assert_eq!(read(7, 8), "h");
        assert_eq!((b.len, b.red_len), (8, 8));
    }
}
