//! Error models of one link direction. Each decides, per packet, whether the packet is hit;
//! the link then drops it or delivers it marked corrupted.

use crate::config::{ErrorCfg, SlotLossMode};
use crate::rng::Rng;
use crate::schedule::{Schedule, Shape};
use spacetp_proto::FieldError;
use spacetp_proto::Time;

#[derive(Clone, Debug)]
enum Model {
    None,
    /// Bit-error rate: P(hit) = 1 - (1 - ber)^bits; `ln_keep` = ln(1 - ber) of a constant
    /// rate, `ber` the schedule otherwise.
    Ber {
        ln_keep: f64,
        ber: Option<Schedule>,
    },
    Per(Schedule),
    GilbertElliott(Box<GilbertElliott>),
    MarkovSlot(Box<MarkovSlot>),
    Scripted {
        drops: Vec<u64>,
        next: usize,
    },
}

#[derive(Clone, Debug)]
struct GilbertElliott {
    p_gb: Schedule,
    p_bg: Schedule,
    loss_good: Schedule,
    loss_bad: Schedule,
    bad: bool,
}

#[derive(Clone, Debug)]
struct MarkovSlot {
    slot: Time,
    a: Vec<Vec<f64>>,
    loss: Vec<f64>,
    mode: SlotLossMode,
    state: usize,
    /// Index of the slot `state` belongs to.
    slot_index: u64,
    /// Whether the current slot drew a loss (OnePerSlot) and whether it was spent.
    slot_lossy: bool,
}

#[derive(Clone, Debug)]
pub struct Channel {
    model: Model,
    rng: Rng,
    /// Packets offered so far (scripted drops count these).
    offered: u64,
}

impl Channel {
    pub fn none(rng: Rng) -> Self {
        Channel {
            model: Model::None,
            rng,
            offered: 0,
        }
    }

    /// Build from the scenario, validating every number; `path` names the field in errors.
    pub fn from_cfg(cfg: &ErrorCfg, path: &str, mut rng: Rng) -> Result<Self, FieldError> {
        let given = [
            cfg.ber.is_some(),
            cfg.per.is_some(),
            cfg.gilbert_elliott.is_some(),
            cfg.markov_slot.is_some(),
            cfg.drop.is_some(),
        ]
        .iter()
        .filter(|&&b| b)
        .count();
        if given > 1 {
            return Err(FieldError::new(path.to_string(), format!("give one error model (ber, per, gilbert_elliott, markov_slot or drop), not {given}")));
        }
        let is_prob = |v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{v} is not a probability; must be in [0, 1]"))
            }
        };
        let prob = |name: &str, v: f64| -> Result<f64, FieldError> {
            is_prob(v).map_err(|m| FieldError::new(format!("{path}.{name}"), m))?;
            Ok(v)
        };
        let sched = |name: &str, s: &crate::schedule::Sched<f64>| {
            Schedule::from_cfg(s, &format!("{path}.{name}"), Shape::Step, is_prob)
        };
        let model = if let Some(ber) = &cfg.ber {
            let ber = Schedule::from_cfg(ber, &format!("{path}.ber"), Shape::Step, |b| {
                if (0.0..1.0).contains(&b) {
                    Ok(())
                } else {
                    Err(format!("{b} must be in [0, 1)"))
                }
            })?;
            if ber.is_constant() {
                Model::Ber {
                    ln_keep: (-ber.at(0)).ln_1p(),
                    ber: None,
                }
            } else {
                Model::Ber {
                    ln_keep: 0.0,
                    ber: Some(ber),
                }
            }
        } else if let Some(per) = &cfg.per {
            Model::Per(sched("per", per)?)
        } else if let Some(ge) = &cfg.gilbert_elliott {
            Model::GilbertElliott(Box::new(GilbertElliott {
                p_gb: sched("gilbert_elliott.p_good_to_bad", &ge.p_good_to_bad)?,
                p_bg: sched("gilbert_elliott.p_bad_to_good", &ge.p_bad_to_good)?,
                loss_good: sched("gilbert_elliott.loss_good", &ge.loss_good)?,
                loss_bad: sched("gilbert_elliott.loss_bad", &ge.loss_bad)?,
                bad: false,
            }))
        } else if let Some(m) = &cfg.markov_slot {
            let n = m.loss.len();
            if n == 0 {
                return Err(FieldError::new(
                    format!("{path}.markov_slot.loss"),
                    "needs one probability per state",
                ));
            }
            if m.transition.len() != n || m.transition.iter().any(|r| r.len() != n) {
                return Err(FieldError::new(
                    format!("{path}.markov_slot.transition"),
                    format!("must be {n} x {n} (one row and column per state in `loss`)"),
                ));
            }
            for (i, row) in m.transition.iter().enumerate() {
                for &v in row {
                    prob(&format!("markov_slot.transition[{i}]"), v)?;
                }
                let s: f64 = row.iter().sum();
                if (s - 1.0).abs() > 1e-9 {
                    return Err(FieldError::new(
                        format!("{path}.markov_slot.transition[{i}]"),
                        format!("row sums to {s}; each row must sum to 1"),
                    ));
                }
            }
            for (i, &v) in m.loss.iter().enumerate() {
                prob(&format!("markov_slot.loss[{i}]"), v)?;
            }
            if m.initial_state >= n {
                return Err(FieldError::new(
                    format!("{path}.markov_slot.initial_state"),
                    format!("{} but there are only {n} states", m.initial_state),
                ));
            }
            if m.slot.0 == 0 {
                return Err(FieldError::new(
                    format!("{path}.markov_slot.slot"),
                    "must be > 0",
                ));
            }
            let lossy = rng.chance(m.loss[m.initial_state]);
            Model::MarkovSlot(Box::new(MarkovSlot {
                slot: m.slot.0,
                a: m.transition.clone(),
                loss: m.loss.clone(),
                mode: m.mode,
                state: m.initial_state,
                slot_index: 0,
                slot_lossy: lossy,
            }))
        } else if let Some(d) = &cfg.drop {
            let mut drops = d.clone();
            drops.sort_unstable();
            drops.dedup();
            Model::Scripted { drops, next: 0 }
        } else {
            Model::None
        };
        Ok(Channel {
            model,
            rng,
            offered: 0,
        })
    }

    /// The chance that a packet of `bits` bits on the wire is hit, at time 0 (a chain's in
    /// its stationary state; a slot model's per packet, its stationary mix of states):
    /// what settings fitted to the link plan for. Scripted drops plan for none.
    pub fn mean_loss(&self, bits: u64) -> f64 {
        match &self.model {
            Model::None | Model::Scripted { .. } => 0.0,
            Model::Ber { ln_keep, ber } => {
                let ln_keep = ber.as_ref().map_or(*ln_keep, |s| (-s.at(0)).ln_1p());
                -(bits as f64 * ln_keep).exp_m1()
            }
            Model::Per(p) => p.at(0),
            Model::GilbertElliott(ge) => {
                let (gb, bg) = (ge.p_gb.at(0), ge.p_bg.at(0));
                let bad = if gb + bg > 0.0 { gb / (gb + bg) } else { 0.0 };
                (1.0 - bad) * ge.loss_good.at(0) + bad * ge.loss_bad.at(0)
            }
            Model::MarkovSlot(m) => {
                // The stationary distribution by power iteration (the chains are small).
                let n = m.a.len();
                let mut pi = vec![1.0 / n as f64; n];
                for _ in 0..1000 {
                    let mut next = vec![0.0; n];
                    for (i, row) in m.a.iter().enumerate() {
                        for (j, &p) in row.iter().enumerate() {
                            next[j] += pi[i] * p;
                        }
                    }
                    pi = next;
                }
                pi.iter().zip(&m.loss).map(|(p, l)| p * l).sum()
            }
        }
    }

    /// Is the packet of `bits` bits on the wire, sent at `now`, hit by an error?
    pub fn hit(&mut self, now: Time, bits: u64) -> bool {
        let index = self.offered;
        self.offered += 1;
        match &mut self.model {
            Model::None => false,
            Model::Ber { ln_keep, ber } => {
                let ln_keep = match ber {
                    None => *ln_keep,
                    Some(s) => (-s.at(now)).ln_1p(),
                };
                let p = -(bits as f64 * ln_keep).exp_m1();
                self.rng.chance(p)
            }
            Model::Per(p) => self.rng.chance(p.at(now)),
            Model::GilbertElliott(ge) => {
                // Step the chain, then draw the loss in the new state.
                let flip = if ge.bad {
                    ge.p_bg.at(now)
                } else {
                    ge.p_gb.at(now)
                };
                if self.rng.chance(flip) {
                    ge.bad = !ge.bad;
                }
                let loss = if ge.bad { &ge.loss_bad } else { &ge.loss_good };
                self.rng.chance(loss.at(now))
            }
            Model::MarkovSlot(m) => {
                let target = now / m.slot;
                while m.slot_index < target {
                    m.slot_index += 1;
                    let row = &m.a[m.state];
                    let u = self.rng.uniform();
                    let mut acc = 0.0;
                    let mut next = row.len() - 1;
                    for (j, &p) in row.iter().enumerate() {
                        acc += p;
                        if u < acc {
                            next = j;
                            break;
                        }
                    }
                    m.state = next;
                    m.slot_lossy = self.rng.chance(m.loss[m.state]);
                }
                match m.mode {
                    SlotLossMode::OnePerSlot => std::mem::replace(&mut m.slot_lossy, false),
                    SlotLossMode::PerPacket => self.rng.chance(m.loss[m.state]),
                }
            }
            Model::Scripted { drops, next } => {
                while *next < drops.len() && drops[*next] < index {
                    *next += 1;
                }
                *next < drops.len() && drops[*next] == index
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{GilbertElliottCfg, MarkovSlotCfg};
    use spacetp_proto::units::Duration;

    fn rng() -> Rng {
        Rng::for_component(3, 1, 0)
    }

    fn rate(ch: &mut Channel, n: u64, bits: u64, dt: Time) -> f64 {
        (0..n).filter(|&i| ch.hit(i * dt, bits)).count() as f64 / n as f64
    }

    #[test]
    fn ber_hits_packets_by_their_size() {
        let cfg = ErrorCfg {
            ber: Some(1e-5.into()),
            ..Default::default()
        };
        let mut ch = Channel::from_cfg(&cfg, "e", rng()).unwrap();
        let p = 1.0 - (1.0f64 - 1e-5).powi(514 * 8);
        let r = rate(&mut ch, 200_000, 514 * 8, 1);
        assert!((r - p).abs() < 0.002, "{r} vs {p}");
        let r40 = rate(&mut ch, 200_000, 42 * 8, 1);
        assert!((r40 - 0.00336).abs() < 0.0006, "{r40}");
    }

    #[test]
    fn gilbert_elliott_matches_its_stationary_loss() {
        let ge = GilbertElliottCfg {
            p_good_to_bad: 0.01.into(),
            p_bad_to_good: 0.1.into(),
            loss_good: 0.0.into(),
            loss_bad: 1.0.into(),
        };
        let cfg = ErrorCfg {
            gilbert_elliott: Some(ge),
            ..Default::default()
        };
        let mut ch = Channel::from_cfg(&cfg, "e", rng()).unwrap();
        let r = rate(&mut ch, 500_000, 1, 1);
        let pi_bad = 0.01 / (0.01 + 0.1);
        assert!((r - pi_bad).abs() < 0.01, "{r} vs {pi_bad}");
    }

    #[test]
    fn markov_slot_loses_one_packet_per_bad_slot() {
        // Always bad: every slot loses exactly its first packet.
        let m = MarkovSlotCfg {
            slot: Duration(100),
            transition: vec![vec![0.0, 1.0], vec![0.0, 1.0]],
            loss: vec![0.0, 1.0],
            mode: SlotLossMode::OnePerSlot,
            initial_state: 1,
        };
        let cfg = ErrorCfg {
            markov_slot: Some(m),
            ..Default::default()
        };
        let mut ch = Channel::from_cfg(&cfg, "e", rng()).unwrap();
        // 10 packets per slot for 50 slots
        let hits: Vec<bool> = (0..500).map(|i| ch.hit(i * 10, 1)).collect();
        assert_eq!(hits.iter().filter(|&&h| h).count(), 50);
        assert!(
            hits.iter().step_by(10).all(|&h| h),
            "the first packet of each slot"
        );
    }

    #[test]
    fn scripted_drops_exact_indices() {
        let cfg = ErrorCfg {
            drop: Some(vec![3, 0, 7]),
            ..Default::default()
        };
        let mut ch = Channel::from_cfg(&cfg, "e", rng()).unwrap();
        let hits: Vec<u64> = (0..10).filter(|&i| ch.hit(i, 1)).collect();
        assert_eq!(hits, vec![0, 3, 7]);
    }

    #[test]
    fn a_per_schedule_changes_the_loss_rate_at_its_points() {
        use crate::schedule::Sched;
        use spacetp_proto::units::Duration;
        let cfg = ErrorCfg {
            per: Some(Sched::Schedule {
                schedule: vec![
                    (Duration(0), 0.0),
                    (Duration(1000), 1.0),
                    (Duration(2000), 0.1),
                ],
            }),
            ..Default::default()
        };
        let mut ch = Channel::from_cfg(&cfg, "e", rng()).unwrap();
        assert_eq!(rate(&mut ch, 1000, 1, 0), 0.0, "PER 0 before 1000 ns");
        let mut hits = 0;
        for i in 0..1000 {
            hits += ch.hit(1000 + i, 1) as u32;
        }
        assert_eq!(hits, 1000, "PER 1 in [1000, 2000)");
        let late: Vec<bool> = (0..100_000).map(|i| ch.hit(2000 + i, 1)).collect();
        let r = late.iter().filter(|&&h| h).count() as f64 / 1e5;
        assert!((r - 0.1).abs() < 0.005, "{r}");
    }

    #[test]
    fn a_schedule_point_out_of_range_is_named() {
        use crate::schedule::Sched;
        use spacetp_proto::units::Duration;
        let cfg = ErrorCfg {
            gilbert_elliott: Some(GilbertElliottCfg {
                p_good_to_bad: Sched::Schedule {
                    schedule: vec![(Duration(0), 0.1), (Duration(5), 1.5)],
                },
                p_bad_to_good: 0.5.into(),
                loss_good: 0.0.into(),
                loss_bad: 1.0.into(),
            }),
            ..Default::default()
        };
        let e = Channel::from_cfg(&cfg, "links[0].errors", rng()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "links[0].errors.gilbert_elliott.p_good_to_bad.schedule[1]: 1.5 is not a \
             probability; must be in [0, 1]"
        );
    }

    #[test]
    fn bad_numbers_are_named() {
        let cfg = ErrorCfg {
            ber: Some(1.5.into()),
            ..Default::default()
        };
        let e = Channel::from_cfg(&cfg, "links[1].errors", rng()).unwrap_err();
        assert_eq!(e.path, "links[1].errors.ber");
        assert_eq!(e.to_string(), "links[1].errors.ber: 1.5 must be in [0, 1)");
        let cfg = ErrorCfg {
            ber: Some(1e-5.into()),
            per: Some(0.1.into()),
            ..Default::default()
        };
        let e = Channel::from_cfg(&cfg, "x", rng()).unwrap_err();
        assert_eq!(e.path, "x");
        assert!(e.message.contains("give one error model"));
    }
}
