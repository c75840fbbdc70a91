//! `[flows.tcp.bbr3]`: the draft's constants, adjustable for experiments. The defaults are
//! draft-ietf-ccwg-bbr-06's (section numbers in the comments).

use crate::cc::{CongestionControl, ControllerFactory};
use crate::error::FieldError;
use crate::time::{MS, SEC};
use crate::units::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// BBRv3 settings (`[flows.tcp.bbr3]`); the defaults are draft-ietf-ccwg-bbr-06's constants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Bbr3Params {
    /// Loss rate per round trip above which inflight was too high (BBR.LossThresh, 2.8).
    /// 0.02. Greater than 0 and less than 1.
    pub loss_thresh: f64,
    /// Multiplicative decrease of the bounds on a round with loss (BBR.Beta, 2.8). 0.7.
    /// Greater than 0 and less than 1.
    pub beta: f64,
    /// Share of inflight_longterm left free for other flows (BBR.Headroom, 2.8). 0.15. At
    /// least 0 and less than 1.
    pub headroom: f64,
    /// Loss events in a round of recovery, with the loss rate above `loss_thresh`, that end
    /// Startup (BBRStartupFullLossCnt, 5.3.1.3). 6. Between 1 and 1000.
    pub startup_full_loss_count: u32,
    /// Time without a lower RTT sample after which ProbeRTT runs (BBR.ProbeRTTInterval,
    /// 2.16.2). 5 s. At least 1 ms and shorter than `min_rtt_window`.
    pub probe_rtt_interval: Duration,
    /// Least time ProbeRTT holds cwnd at half the BDP (BBR.ProbeRTTDuration, 2.16.2). 200 ms.
    /// At least 1 ms and shorter than `probe_rtt_interval`.
    pub probe_rtt_duration: Duration,
    /// Window of the min_rtt filter (BBR.MinRTTFilterLen, 2.16.1). 10 s. At least 1 ms.
    pub min_rtt_window: Duration,
}

impl Default for Bbr3Params {
    fn default() -> Self {
        Bbr3Params {
            loss_thresh: 0.02,
            beta: 0.7,
            headroom: 0.15,
            startup_full_loss_count: 6,
            probe_rtt_interval: Duration(5 * SEC),
            probe_rtt_duration: Duration(200 * MS),
            min_rtt_window: Duration(10 * SEC),
        }
    }
}

impl ControllerFactory for Bbr3Params {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(super::Bbr3::new(self))
    }

    fn validate(&self) -> Result<(), FieldError> {
        let open_unit = |name: &str, v: f64| {
            if v > 0.0 && v < 1.0 {
                Ok(())
            } else {
                Err(FieldError::new(
                    name,
                    format!("{v} must be greater than 0 and less than 1"),
                ))
            }
        };
        open_unit("loss_thresh", self.loss_thresh)?;
        open_unit("beta", self.beta)?;
        if !(0.0..1.0).contains(&self.headroom) {
            return Err(FieldError::new(
                "headroom",
                format!("{} must be at least 0 and less than 1", self.headroom),
            ));
        }
        if !(1..=1000).contains(&self.startup_full_loss_count) {
            return Err(FieldError::new(
                "startup_full_loss_count",
                format!(
                    "{} must be between 1 and 1000",
                    self.startup_full_loss_count
                ),
            ));
        }
        if self.min_rtt_window.0 < MS {
            return Err(FieldError::new("min_rtt_window", "must be at least 1 ms"));
        }
        if self.probe_rtt_interval.0 < MS || self.probe_rtt_interval.0 >= self.min_rtt_window.0 {
            return Err(FieldError::new(
                "probe_rtt_interval",
                "must be at least 1 ms and shorter than min_rtt_window",
            ));
        }
        if self.probe_rtt_duration.0 < MS || self.probe_rtt_duration.0 >= self.probe_rtt_interval.0
        {
            return Err(FieldError::new(
                "probe_rtt_duration",
                "must be at least 1 ms and shorter than probe_rtt_interval",
            ));
        }
        Ok(())
    }
}
