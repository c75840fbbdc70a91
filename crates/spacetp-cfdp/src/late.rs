//! A Finished PDU that arrives after the sender's transaction ended: its ACK was lost, and
//! the receiver, waiting for it, sends the Finished PDU again at each positive-ACK timer
//! expiry. cfdp-rs 0.3's source handler, idle once the transaction ended, does not answer
//! it, so the receiver runs into its positive-ACK limit with the file delivered. Answered
//! here: an ACK of the Finished PDU, transaction status "terminated" (727.0-B-5 5.2.4:
//! the ACK gives the status of the transaction at the sender).

use spacepackets::cfdp::pdu::ack::AckPdu;
use spacepackets::cfdp::pdu::finished::FinishedPduReader;
use spacepackets::cfdp::{ConditionCode, TransactionStatus};

/// The ACK of the EOF PDU that a Finished PDU `raw` implies, if it is one: the receiver
/// sends Finished only after it received the EOF (727.0-B-5 4.6.3), so a Finished that
/// reaches a sender still waiting for the EOF's ACK tells it the ACK was lost. cfdp-rs
/// 0.3's source handler refuses that Finished (it accepts one only once the EOF is
/// acknowledged): with a receiver that, waiting for its Finished's ACK, does not
/// acknowledge the EOFs sent again (cfdp-py 0.5), both ends then wait until their limits
/// with the file delivered. Handed to the handler first, this ACK lets it take the
/// Finished, acknowledge it and complete, as NASA's CF does in that state.
pub fn ack_of_eof_implied_by(raw: &[u8]) -> Option<Vec<u8>> {
    let fin = FinishedPduReader::new(raw).ok()?;
    // From the receiver toward the sender, as the Finished: its header serves.
    let ack = AckPdu::new_for_eof_pdu(
        *fin.pdu_header(),
        ConditionCode::NoError,
        TransactionStatus::Active,
    );
    let mut out = vec![0u8; ack.len_written()];
    ack.write_to_bytes(&mut out).ok()?;
    Some(out)
}

/// The ACK of `raw` if it is a Finished PDU; None otherwise.
pub fn ack_of_finished(raw: &[u8]) -> Option<Vec<u8>> {
    let fin = FinishedPduReader::new(raw).ok()?;
    let ack = AckPdu::new_for_finished_pdu(
        *fin.pdu_header(),
        fin.condition_code(),
        TransactionStatus::Terminated,
    );
    let mut out = vec![0u8; ack.len_written()];
    ack.write_to_bytes(&mut out).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use spacepackets::cfdp::pdu::ack::AckPdu;
    use spacepackets::cfdp::pdu::finished::FinishedPduCreator;
    use spacepackets::cfdp::pdu::finished::{DeliveryCode, FileStatus};
    use spacepackets::cfdp::pdu::{CommonPduConfig, FileDirectiveType, PduHeader};
    use spacepackets::cfdp::{ConditionCode, Direction};

    #[test]
    fn a_finished_pdu_gets_an_ack_of_finished_towards_the_receiver() {
        let mut conf = CommonPduConfig::default();
        conf.direction = Direction::TowardsSender;
        let fin = FinishedPduCreator::new_no_error(
            PduHeader::new_for_file_directive(conf, 0),
            DeliveryCode::Complete,
            FileStatus::Retained,
        );
        let mut raw = vec![0u8; fin.len_written()];
        fin.write_to_bytes(&mut raw).unwrap();
        let ack = ack_of_finished(&raw).expect("an ACK");
        let ack = AckPdu::from_bytes(&ack).unwrap();
        assert_eq!(
            ack.directive_code_of_acked_pdu(),
            FileDirectiveType::FinishedPdu
        );
        assert_eq!(ack.condition_code(), ConditionCode::NoError);
        assert_eq!(ack.transaction_status(), TransactionStatus::Terminated);
        assert_eq!(
            ack.pdu_header().common_pdu_conf().direction,
            Direction::TowardsReceiver
        );
        assert!(
            ack_of_finished(&raw[..raw.len() - 1]).is_none(),
            "a cut PDU is none"
        );
    }
}
