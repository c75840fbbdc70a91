//! The congestion controllers a connection can run, in one list: each one's keyword
//! (`congestion_control = "cubic"`), its controller and, for those with settings, the
//! `[flows.tcp.NAME]` table that builds it (quinn-proto's `ControllerFactory`: the settings
//! are the factory). A new controller is its own file and one line below; the keyword, the
//! settings table, its schema, its checks and its construction all follow from that line.

use super::*;
use crate::error::FieldError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a controller's settings make: the controller, with them inside.
pub trait ControllerFactory {
    fn build(&self) -> Box<dyn CongestionControl>;

    /// Values the controller cannot work with, the field named within its table.
    fn validate(&self) -> Result<(), FieldError> {
        Ok(())
    }
}

/// Writes the keyword enum, the table of every controller's settings and the dispatch from
/// one to the other. `fixed`: controllers without settings, given as the value that builds
/// them; `tuned`: controllers with a settings table, given as the table's field and type.
macro_rules! controllers {
    (
        fixed { $( $(#[$fdoc:meta])* $fvariant:ident = $fkey:literal => $factory:expr, )* }
        tuned { $( $(#[$tdoc:meta])* $tvariant:ident = $tkey:literal => $field:ident: $params:ty, )* }
    ) => {
        /// Congestion controller.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
        pub enum CongestionControlKind {
            $( $(#[$fdoc])* #[serde(rename = $fkey)] $fvariant, )*
            $( $(#[$tdoc])* #[serde(rename = $tkey)] $tvariant, )*
        }

        impl CongestionControlKind {
            /// Every controller, in the list's order.
            pub const ALL: &'static [CongestionControlKind] = &[
                $( CongestionControlKind::$fvariant, )*
                $( CongestionControlKind::$tvariant, )*
            ];
        }

        /// Every controller's settings, one table each under its keyword
        /// (`[flows.tcp.vegas] alpha = 1`); only the chosen controller's is used.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
        pub struct ControllerParams {
            $( $(#[$tdoc])* pub $field: $params, )*
        }

        impl ControllerParams {
            /// The factory of the controller `kind` names: its settings, or the controller
            /// itself when it has none.
            pub fn factory(&self, kind: CongestionControlKind) -> &dyn ControllerFactory {
                match kind {
                    $( CongestionControlKind::$fvariant => &$factory, )*
                    $( CongestionControlKind::$tvariant => &self.$field, )*
                }
            }

            /// The tables a user's overrides give, each read alone so that an error names
            /// its field (`cubic.bta`): serde loses the path inside a flattened part.
            pub fn check_tables(
                over: &serde_json::Map<String, serde_json::Value>,
            ) -> Result<(), FieldError> {
                $(
                    if let Some(v) = over.get(stringify!($field)) {
                        serde_path_to_error::deserialize::<_, $params>(v.clone()).map_err(|e| {
                            // "." is the table itself (`cubic = 5`).
                            let path = e.path().to_string();
                            let path = if path == "." { String::new() } else { path };
                            FieldError::new(path, e.into_inner().to_string())
                                .within(stringify!($field))
                        })?;
                    }
                )*
                Ok(())
            }

            /// Every table's checks, errors under the table's name (`cubic.beta`).
            pub fn validate(&self) -> Result<(), FieldError> {
                $( self.$field.validate().map_err(|e| e.within(stringify!($field)))?; )*
                Ok(())
            }
        }
    };
}

controllers! {
    fixed {
        /// RFC 5681 AIMD (the controller of Reno and NewReno).
        Newreno = "newreno" => NewReno,
        /// No congestion control (SCPS-TP NUCC): the window is the receiver's, and `scps.rate`
        /// clocks transmissions out.
        None = "none" => Nucc,
    }
    tuned {
        /// TCP Vegas (Brakmo, O'Malley & Peterson 1994): delay-based, with its modified slow start.
        Vegas = "vegas" => vegas: VegasParams,
        /// TCP Westwood+ (Mascolo et al.): ssthresh from a bandwidth estimate after a loss.
        Westwood = "westwood" => westwood: WestwoodParams,
        /// HighSpeed TCP (RFC 3649): a(w), b(w) from the response function.
        Highspeed = "highspeed" => highspeed: HighSpeedParams,
        /// TCP Hybla (Caini & Firrincieli 2004): growth normalised to a 25 ms reference RTT.
        Hybla = "hybla" => hybla: HyblaParams,
        /// Scalable TCP (Kelly 2003): multiplicative increase, multiplicative decrease.
        Scalable = "scalable" => scalable: ScalableParams,
        /// BIC TCP (Xu, Harfoush & Rhee 2004): binary search increase.
        Bic = "bic" => bic: BicParams,
        /// CUBIC (RFC 9438).
        Cubic = "cubic" => cubic: CubicParams,
        /// BBR version 1 as Linux's `net/ipv4/tcp_bbr.c`: a model of bottleneck bandwidth and
        /// round-trip propagation time sets the pacing rate and cwnd (Startup, Drain, ProbeBW,
        /// ProbeRTT, long-term bandwidth for policers).
        Bbr = "bbr" => bbr: BbrParams,
        /// BBRv3 as draft-ietf-ccwg-bbr-06 specifies it (not what a stock Linux kernel runs):
        /// BBR v1's model plus loss-bounded inflight (inflight_longterm and the short-term
        /// bw_shortterm / inflight_shortterm), ProbeBW's DOWN / CRUISE / REFILL / UP cycle timed
        /// for Reno coexistence, Startup's exit on loss, ProbeRTT every 5 s at half the BDP.
        Bbr3 = "bbr3" => bbr3: Bbr3Params,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TcpConfig;

    #[test]
    fn every_keyword_builds_the_controller_of_that_name() {
        let params = ControllerParams::default();
        for &kind in CongestionControlKind::ALL {
            let keyword = serde_json::to_value(kind).unwrap();
            let back: CongestionControlKind = serde_json::from_value(keyword.clone()).unwrap();
            assert_eq!(back, kind);
            let built = params.factory(kind).build();
            assert_eq!(Some(built.name()), keyword.as_str(), "{kind:?}");
        }
    }

    #[test]
    fn a_controllers_settings_are_inside_the_controller_it_builds() {
        // CUBIC's beta is the share of the flight ssthresh keeps after a loss.
        let mut params = ControllerParams::default();
        assert!(params.validate().is_ok());
        params.cubic.beta = 2.0;
        let e = params.validate().unwrap_err();
        assert_eq!(e.path, "cubic.beta");
        params.cubic.beta = 0.5;
        let w = Window {
            cwnd: 100_000,
            ssthresh: 50_000,
            mss: 1000,
        };
        let mut cubic = params.factory(CongestionControlKind::Cubic).build();
        assert_eq!(
            cubic.ssthresh_after_loss(&w, 100_000, 0),
            50_000,
            "beta 0.5 inside"
        );
        let mut default = ControllerParams::default()
            .factory(CongestionControlKind::Cubic)
            .build();
        assert_eq!(
            default.ssthresh_after_loss(&w, 100_000, 0),
            70_000,
            "beta 0.7"
        );
    }

    #[test]
    fn every_tuned_controller_has_its_table_in_the_settings_schema() {
        let schema = serde_json::to_value(TcpConfig::schema()).unwrap();
        let props = schema["properties"].as_object().unwrap();
        let tables = serde_json::to_value(ControllerParams::default()).unwrap();
        for key in tables.as_object().unwrap().keys() {
            assert!(props.contains_key(key), "{key}");
            let kind: CongestionControlKind = serde_json::from_value(key.as_str().into())
                .unwrap_or_else(|_| panic!("table {key} is no controller's keyword"));
            assert!(CongestionControlKind::ALL.contains(&kind));
        }
        assert_eq!(schema["additionalProperties"], serde_json::json!(false));
    }
}
