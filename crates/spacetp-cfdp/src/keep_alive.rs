//! Prompt and Keep Alive PDUs (727.0-B-5 5.2.7 and 5.2.8), which neither cfdp-rs 0.3 nor
//! spacepackets 0.16 builds: in class 2 the sender may prompt the receiver for a Keep Alive,
//! which reports how far the file has arrived (its progress); a sender that finds the
//! receiver too far behind declares "keep alive limit reached" (4.6.5.2). Built here from
//! the transaction's own PDU header.

use spacepackets::cfdp::pdu::{CommonPduConfig, FileDirectiveType, PduHeader};
use spacepackets::cfdp::{Direction, LargeFileFlag, PduType};

/// One of the two PDUs, read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A Prompt; `keep_alive`: it asks for a Keep Alive (else for a NAK).
    Prompt { keep_alive: bool },
    /// A Keep Alive with the receiver's progress.
    KeepAlive { progress: u64 },
}

/// A directive PDU of `body` (directive code first) with the transaction's header, towards
/// `direction`; None with a CRC flag (these transactions carry none).
fn directive(conf: &CommonPduConfig, direction: Direction, body: &[u8]) -> Option<Vec<u8>> {
    let mut c = *conf;
    c.direction = direction;
    if c.crc_flag == spacepackets::cfdp::CrcFlag::WithCrc {
        return None;
    }
    let header = PduHeader::new_for_file_directive(c, body.len() as u16);
    let mut out = vec![0u8; header.header_len() + body.len()];
    let n = header.write_to_bytes(&mut out).ok()?;
    out[n..].copy_from_slice(body);
    Some(out)
}

/// The sender's Prompt asking for a Keep Alive (response required: 1).
pub fn prompt(conf: &CommonPduConfig) -> Option<Vec<u8>> {
    directive(
        conf,
        Direction::TowardsReceiver,
        &[FileDirectiveType::PromptPdu as u8, 0x80],
    )
}

/// The receiver's Keep Alive, `progress` bytes (4 or 8 of them, by the large-file flag).
pub fn keep_alive(conf: &CommonPduConfig, progress: u64) -> Option<Vec<u8>> {
    let mut body = vec![FileDirectiveType::KeepAlivePdu as u8];
    match conf.file_flag {
        LargeFileFlag::Normal => {
            body.extend_from_slice(&(progress.min(u32::MAX as u64) as u32).to_be_bytes())
        }
        LargeFileFlag::Large => body.extend_from_slice(&progress.to_be_bytes()),
    }
    directive(conf, Direction::TowardsSender, &body)
}

/// `raw` read as a Prompt or Keep Alive, with its header's configuration; None for any other
/// PDU.
pub fn read(raw: &[u8]) -> Option<(Probe, CommonPduConfig)> {
    let (h, at) = PduHeader::from_bytes(raw).ok()?;
    if h.pdu_type() != PduType::FileDirective {
        return None;
    }
    let body = raw.get(at..h.pdu_len())?;
    let conf = *h.common_pdu_conf();
    match *body.first()? {
        c if c == FileDirectiveType::PromptPdu as u8 => Some((
            Probe::Prompt {
                keep_alive: body.get(1)? & 0x80 != 0,
            },
            conf,
        )),
        c if c == FileDirectiveType::KeepAlivePdu as u8 => {
            let progress = match conf.file_flag {
                LargeFileFlag::Normal => {
                    u32::from_be_bytes(body.get(1..5)?.try_into().ok()?) as u64
                }
                LargeFileFlag::Large => u64::from_be_bytes(body.get(1..9)?.try_into().ok()?),
            };
            Some((Probe::KeepAlive { progress }, conf))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_and_a_keep_alive_read_back_as_written() {
        let conf = CommonPduConfig::default();
        let p = prompt(&conf).unwrap();
        assert_eq!(read(&p).unwrap().0, Probe::Prompt { keep_alive: true });
        // 727.0-B-5 5.2.7: directive code 09h, then the response-required bit first.
        let (h, at) = PduHeader::from_bytes(&p).unwrap();
        assert_eq!(&p[at..], &[0x09, 0x80]);
        assert_eq!(h.common_pdu_conf().direction, Direction::TowardsReceiver);
        let k = keep_alive(&conf, 123_456).unwrap();
        assert_eq!(read(&k).unwrap().0, Probe::KeepAlive { progress: 123_456 });
        let (_, at) = PduHeader::from_bytes(&k).unwrap();
        assert_eq!(&k[at..], &[0x0c, 0x00, 0x01, 0xe2, 0x40]);
    }
}
