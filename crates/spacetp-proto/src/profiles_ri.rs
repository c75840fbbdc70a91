//! SCPS-TP as the SCPS Reference Implementation ships it (MITRE/JPL RI 1.1.146, the public
//! copy in GitHub `Linjay/SCPS_Project`): what a socket gets when neither the application nor
//! the gateway's resource file sets anything. `scps-ri` is the stand-alone stack, `scps-ri-
//! gateway` a gateway connection (`gateway_set_options`: congestion control off unless
//! `AIF_CC` says otherwise). The papers' `scps-tp` profile is their configuration, not these
//! defaults; `SCPS_RI` says where each value comes from.

use crate::cc::{ControllerParams, VegasParams};
use crate::config::{
    CongestionControlKind as Cc, InitialWindow, LossSource, RtoFormula, ScpsConfig, TcpConfig,
};
use crate::time::{MS, SEC};
use crate::units::{Bytes, Duration, Rate};

/// `[(setting, where the RI sets it)]`, paths under `source/` of the RI.
pub const SCPS_RI: &[(&str, &str)] = &[
    ("congestion_control = vegas, alpha 3, beta 5, gamma 4", "tp_Common (tp_utility.c): cong_algorithm = VEGAS_CONGESTION_CONTROL; ALPHA/BETA/GAMMA in scpstp.h"),
    ("scps-ri-gateway: congestion_control = none", "gateway_set_options (tp_handler.c): AIF_CC/BIF_CC default 0 clears SCPSTP_CONGEST (rs_config.c)"),
    ("rate = 2 Mb/s, bucket = 7500 B", "DEFAULT_RATE 2000000 (scps_defines.h), route_create_default(2000000, 1500, 1500) (scps_globali.c); bucket 5 x max(2500 B, MTU)"),
    ("initial_rto = 6 s, syn_rto = 6 s", "route_create_default (rt_alloc.c): initial_RTO = 6000000 us, used for the SYN and until an RTT sample"),
    ("min_rto = 250 ms, max_rto = 64 s", "tp_RTOMIN, tp_RTOMAX (scps_constants.h)"),
    ("rto_formula = rfc6298, clock_granularity = 500 ms", "tp_xmit_timer (tp_timers.c): t_rxtcur = srtt + max(rttvar, 500000 us)"),
    ("max_retries = 32, syn_retries = 32", "tp_TIMEOUT, tp_LONGTIMEOUT (scps_constants.h)"),
    ("receive_buffer = send_buffer = 32 kB, window_scaling, timestamps", "BUFFER_SIZE 32768 (scps_constants.h); TF_REQ_SCALE, TF_REQ_TSTMP in tp_Common"),
    ("snack (SNACK1, no bit vector), no SACK, no compression", "CAP_SNACK in tp_Common; the RI has no SACK; capabilities start at 0 (SCPSTP_COMPRESS turns COMP on)"),
    ("ack_every = 2, ack_delay = 200 ms", "DEFAULT_ACK_FREQ 2, tp_ACKDELAY 200000 (scps_constants.h)"),
    ("initial_window = rfc3390, initial_ssthresh = 64 KiB", "tp_handler.c: snd_cwnd = min(4 maxdata, max(2 maxdata, 4380)); tp_utility2.c: snd_ssthresh = 1 << 16"),
    ("loss_source = corruption", "configure: assume_corrupt=yes (RT_ASSUME_CORRUPT on the default route, rt_alloc.c)"),
    ("bets off", "capabilities start at 0; SCPSTP_BETS turns it on"),
];

/// The settings of RI profile `name`.
pub fn scps_ri(name: &str) -> Option<TcpConfig> {
    let stand_alone = TcpConfig {
        congestion_control: Cc::Vegas,
        cc: ControllerParams {
            vegas: VegasParams {
                alpha: 3.0,
                beta: 5.0,
                gamma: 4.0,
                ..VegasParams::default()
            },
            ..Default::default()
        },
        scps: ScpsConfig {
            enabled: true,
            snack: true,
            loss_source: LossSource::Corruption,
            rate: Some(Rate(2e6)),
            bucket: Bytes(7500),
            ..ScpsConfig::default()
        },
        initial_rto: Duration(6 * SEC),
        syn_rto: Some(Duration(6 * SEC)),
        min_rto: Duration(250 * MS),
        max_rto: Duration(64 * SEC),
        rto_formula: RtoFormula::Rfc6298,
        clock_granularity: Duration(500 * MS),
        max_retries: 32,
        syn_retries: 32,
        receive_buffer: Bytes(32_768),
        send_buffer: Bytes(32_768),
        window_scaling: true,
        timestamps: true,
        ack_every: 2,
        ack_delay: Duration(200 * MS),
        initial_window: InitialWindow::Rfc3390,
        initial_ssthresh: Some(Bytes(65_536)),
        ..TcpConfig::default()
    };
    match name {
        "scps-ri" => Some(stand_alone),
        "scps-ri-gateway" => Some(TcpConfig {
            congestion_control: Cc::None,
            ..stand_alone
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ri_profiles_are_valid_and_differ_only_in_congestion_control() {
        let (a, g) = (
            scps_ri("scps-ri").unwrap(),
            scps_ri("scps-ri-gateway").unwrap(),
        );
        a.validate().unwrap();
        g.validate().unwrap();
        assert_eq!(a.congestion_control, Cc::Vegas);
        assert_eq!(g.congestion_control, Cc::None);
        // RFC 3390 at the RI's 1448-byte payload (1460 less timestamps): 4380 bytes.
        assert_eq!(a.initial_window.bytes(1448), 4380);
        assert_eq!(a.scps.rate, Some(Rate(2e6)));
    }
}
