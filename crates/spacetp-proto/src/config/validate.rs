//! The values a connection cannot work with, refused with the field and the rule.

use super::*;
use crate::error::FieldError;

impl TcpConfig {
    /// Check the values a connection cannot work with; errors name the field and the rule.
    pub fn validate(&self) -> Result<(), FieldError> {
        self.validate_counts()?;
        self.validate_timers()?;
        self.validate_options()?;
        self.validate_buffers()?;
        self.validate_scps()?;
        self.validate_controllers()
    }

    /// Windows and thresholds counted in segments or ACKs.
    fn validate_counts(&self) -> Result<(), FieldError> {
        match self.initial_window {
            InitialWindow::Segments(0) => {
                return Err(FieldError::new(
                    "initial_window",
                    "must be at least 1 segment",
                ))
            }
            InitialWindow::Bytes(b) if b.0 == 0 => {
                return Err(FieldError::new("initial_window", "must be at least 1 byte"))
            }
            _ => {}
        }
        if self.ack_every == 0 {
            return Err(FieldError::new("ack_every", "must be at least 1"));
        }
        if self.dupack_threshold == 0 {
            return Err(FieldError::new("dupack_threshold", "must be at least 1"));
        }
        Ok(())
    }

    /// The retransmission timer and its bounds.
    fn validate_timers(&self) -> Result<(), FieldError> {
        if self.min_rto.0 == 0 {
            return Err(FieldError::new("min_rto", "must be > 0"));
        }
        if self.max_rto.0 < self.min_rto.0 {
            return Err(FieldError::new(
                "max_rto",
                format!("{} is below min_rto {}", self.max_rto, self.min_rto),
            ));
        }
        if self.initial_rto.0 == 0 {
            return Err(FieldError::new("initial_rto", "must be > 0"));
        }
        // The RTO before any RTT sample is initial_rto; it is not clamped into
        // [min_rto, max_rto] behind the user's back.
        if self.initial_rto.0 < self.min_rto.0 || self.initial_rto.0 > self.max_rto.0 {
            return Err(FieldError::new(
                "initial_rto",
                format!(
                    "{} is outside [min_rto, max_rto] = [{}, {}]; change initial_rto \
                 or the bound",
                    self.initial_rto, self.min_rto, self.max_rto
                ),
            ));
        }
        if self.max_backoff.is_some_and(|d| d.0 == 0) {
            return Err(FieldError::new("max_backoff", "must be > 0"));
        }
        if self
            .max_pacing_rate
            .is_some_and(|r| r.0.is_nan() || r.0 <= 0.0)
        {
            return Err(FieldError::new("max_pacing_rate", "must be > 0"));
        }
        if self.syn_rto.is_some_and(|d| d.0 == 0) {
            return Err(FieldError::new("syn_rto", "must be > 0"));
        }
        Ok(())
    }

    /// Settings that contradict each other.
    fn validate_options(&self) -> Result<(), FieldError> {
        if matches!(
            self.recovery,
            RecoveryKind::Sack | RecoveryKind::Fack | RecoveryKind::Rack
        ) && !self.sack
        {
            let name = match self.recovery {
                RecoveryKind::Sack => "sack",
                RecoveryKind::Fack => "fack",
                _ => "rack",
            };
            return Err(FieldError::new(
                "recovery",
                format!(
                    "\"{name}\" needs sack = true (with sack = false this end never \
                 negotiates SACK and recovery would be NewReno's)"
                ),
            ));
        }
        if self.abc_limit == Some(0) {
            return Err(FieldError::new("abc_limit", "must be at least 1 segment"));
        }
        if self.dsack && !self.sack {
            return Err(FieldError::new(
                "dsack",
                "needs sack = true (D-SACK blocks are SACK blocks)",
            ));
        }
        if self.rto_undo && !self.timestamps {
            return Err(FieldError::new(
                "rto_undo",
                "needs timestamps = true (a timeout is found spurious by the timestamp echo)",
            ));
        }
        if !self.window_scaling && self.receive_buffer.0 > 65535 {
            return Err(FieldError::new(
                "receive_buffer",
                format!(
                    "{} cannot be advertised with window_scaling = false (at most \
                 65535 B); set window_scaling = true or a smaller receive_buffer",
                    self.receive_buffer
                ),
            ));
        }
        Ok(())
    }

    /// Buffers, and the window they can be advertised with.
    fn validate_buffers(&self) -> Result<(), FieldError> {
        if self.receive_buffer.0 < 1 {
            return Err(FieldError::new("receive_buffer", "must be at least 1 byte"));
        }
        if self.receive_autotuning
            && !(4096..=self.receive_buffer.0).contains(&self.receive_buffer_initial.0)
        {
            return Err(FieldError::new(
                "receive_buffer_initial",
                format!(
                    "{} must be at least 4096 B (Linux tcp_rmem[0]) and at most receive_buffer \
                     ({})",
                    self.receive_buffer_initial, self.receive_buffer
                ),
            ));
        }
        if self.send_buffer.0 < 1 {
            return Err(FieldError::new("send_buffer", "must be at least 1 byte"));
        }
        let max_window = 65535u64 << 14;
        if self.receive_buffer.0 > max_window {
            return Err(FieldError::new("receive_buffer", format!("{} is above the largest window TCP can advertise, 65535 x 2^14 = {max_window} B",
                self.receive_buffer
            )));
        }
        Ok(())
    }

    /// SCPS-TP's settings.
    fn validate_scps(&self) -> Result<(), FieldError> {
        if let Some(p) = self.scps.ack_period {
            if p.0 == 0 {
                return Err(FieldError::new("scps.ack_period", "must be > 0"));
            }
        }
        if self.scps.bets.is_some_and(|d| d.0 == 0) {
            return Err(FieldError::new(
                "scps.bets",
                "must be > 0 (the wait before a hole is given up)",
            ));
        }
        if self.scps.rate.is_some() && self.scps.bucket.0 == 0 {
            return Err(FieldError::new("scps.bucket", "must be at least 1 byte"));
        }
        if self.scps.snack_bitvector && !self.scps.snack {
            return Err(FieldError::new(
                "scps.snack_bitvector",
                "needs scps.snack = true",
            ));
        }
        Ok(())
    }

    /// Each congestion controller's parameters, under its own name.
    fn validate_controllers(&self) -> Result<(), FieldError> {
        self.cc.validate()
    }
}
