//! Distributions of file sizes and inter-request times.

use crate::config::DistCfg;
use crate::rng::Rng;
use spacetp_proto::units::{Bytes, Duration};
use spacetp_proto::FieldError;

#[derive(Clone, Debug)]
pub enum Dist {
    Constant(f64),
    Exponential(f64),
    Uniform(f64, f64),
    Empirical(Vec<f64>),
}

pub trait AsF64: Copy {
    fn as_f64(self) -> f64;
}
impl AsF64 for Bytes {
    fn as_f64(self) -> f64 {
        self.0 as f64
    }
}
impl AsF64 for Duration {
    fn as_f64(self) -> f64 {
        self.0 as f64
    }
}

impl Dist {
    pub fn from_cfg<T: AsF64>(c: &DistCfg<T>, path: &str) -> Result<Dist, FieldError> {
        let n = [
            c.constant.is_some(),
            c.exponential.is_some(),
            c.uniform.is_some(),
            c.empirical.is_some(),
        ]
        .iter()
        .filter(|&&b| b)
        .count();
        if n != 1 {
            return Err(FieldError::new(
                path.to_string(),
                "give exactly one of constant, exponential, uniform, empirical",
            ));
        }
        if let Some(v) = c.constant {
            return Ok(Dist::Constant(v.as_f64()));
        }
        if let Some(m) = c.exponential {
            if m.as_f64() <= 0.0 {
                return Err(FieldError::new(
                    format!("{path}.exponential"),
                    "the mean must be > 0",
                ));
            }
            return Ok(Dist::Exponential(m.as_f64()));
        }
        if let Some((a, b)) = c.uniform {
            if b.as_f64() < a.as_f64() {
                return Err(FieldError::new(
                    format!("{path}.uniform"),
                    "[low, high] needs low <= high",
                ));
            }
            return Ok(Dist::Uniform(a.as_f64(), b.as_f64()));
        }
        let list = c.empirical.as_deref().unwrap_or(&[]);
        if list.is_empty() {
            return Err(FieldError::new(
                format!("{path}.empirical"),
                "the list is empty",
            ));
        }
        Ok(Dist::Empirical(list.iter().map(|v| v.as_f64()).collect()))
    }

    pub fn draw(&self, rng: &mut Rng) -> f64 {
        match self {
            Dist::Constant(v) => *v,
            Dist::Exponential(m) => rng.exponential(*m),
            Dist::Uniform(a, b) => a + (b - a) * rng.uniform(),
            Dist::Empirical(v) => v[rng.below(v.len() as u64) as usize],
        }
    }
}
