//! Problem kinds: what a ladder's kernels compute. Each kind is one module that owns its
//! shape (named dimensions and flags), its FLOP and byte counts, the kernel argument
//! list, its seeded inputs, the fp64 CPU recomputation of output rows, its check cases
//! and its baselines. Everything else (the runner, the checker, the timer, the
//! profiler, the report and the explorer) works through [`ProblemKind`] and [`Shape`]
//! ([`problem`]) and names no kind's terms. Pure host code, below the model and the GPU
//! side.
//!
//! A third kind is one module here implementing [`ProblemKind`], one line in [`KINDS`],
//! and a recipe (`kind = "…"`) with its kernels; see the README's architecture section.

pub mod attention;
pub mod gemm;
pub mod problem;

pub use problem::{
    Baseline, BaselineRun, Case, Dim, Flag, Kind, MAX_DIMS, ProblemKind, Scalar, Shape, ShapeText,
    Tensor, sample_distinct_rows,
};

use serde::Deserialize;
use std::collections::BTreeMap;

/// Every problem kind stallscope can run, by [`ProblemKind::name`].
pub static KINDS: &[&dyn ProblemKind] = &[&attention::Attention, &gemm::Gemm];

/// What files written before problem kinds existed (run files of schema 2 and older,
/// profiles manifests without `kind`) describe: the only kind there was then.
pub fn legacy() -> Kind {
    Kind::of(&attention::Attention)
}

impl Kind {
    /// The kind called `name`, or an error naming the known ones.
    pub fn named(name: &str) -> Result<Kind, String> {
        KINDS
            .iter()
            .find(|k| k.name() == name)
            .map(|k| Kind::of(*k))
            .ok_or_else(|| {
                format!(
                    "no problem kind {name:?}: stallscope knows {}",
                    KINDS
                        .iter()
                        .map(|k| k.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }
}

/// Reads the object [`Serialize`] writes; without `kind`, the [`legacy`] kind, and a
/// flag left out is not set.
impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Shape, D::Error> {
        use serde::de::Error;
        let mut map = BTreeMap::<String, serde_json::Value>::deserialize(de)?;
        let kind = match map.remove("kind") {
            None => legacy(),
            Some(serde_json::Value::String(k)) => Kind::named(&k).map_err(D::Error::custom)?,
            Some(other) => return Err(D::Error::custom(format!("kind {other} is not a name"))),
        };
        let mut dims = Vec::new();
        for d in kind.dims() {
            let key = d.name.to_lowercase();
            let v = map
                .remove(&key)
                .and_then(|v| v.as_u64())
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| {
                    D::Error::custom(format!(
                        "a {} shape needs {key} as a positive integer",
                        kind.name()
                    ))
                })?;
            dims.push(v);
        }
        let mut shape = Shape::new(kind, &dims).map_err(D::Error::custom)?;
        for f in kind.flags() {
            match map.remove(f.name) {
                None | Some(serde_json::Value::Bool(false)) => {}
                Some(serde_json::Value::Bool(true)) => {
                    shape = shape.with_flag(f.name, true).map_err(D::Error::custom)?
                }
                Some(other) => {
                    return Err(D::Error::custom(format!(
                        "{} is {other}, not true or false",
                        f.name
                    )));
                }
            }
        }
        if let Some(extra) = map.keys().next() {
            return Err(D::Error::custom(format!(
                "{extra:?} is not a dimension or flag of {}",
                kind.name()
            )));
        }
        Ok(shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str) -> Kind {
        Kind::named(name).unwrap()
    }

    #[test]
    fn kinds_are_found_by_name_and_an_unknown_one_names_the_known() {
        assert_eq!(kind("gemm").name(), "gemm");
        assert_eq!(legacy().name(), "attention");
        let e = Kind::named("conv").unwrap_err();
        assert_eq!(
            e,
            "no problem kind \"conv\": stallscope knows attention, gemm"
        );
    }

    #[test]
    fn every_kind_is_complete() {
        for k in KINDS {
            let k = Kind::of(*k);
            let s = k.reference();
            assert_eq!(s.dims().len(), k.dims().len(), "{k}");
            assert!(s.flops() > 0.0 && s.bytes() > 0.0, "{k}");
            let tensors = k.tensors(&s);
            assert_eq!(tensors.iter().filter(|t| t.output).count(), 1, "{k}");
            assert!(!k.input_names().is_empty(), "{k}");
            let cases = k.cases(&s);
            assert!(!cases.is_empty(), "{k}");
            for c in &cases {
                assert!(k.input_names().contains(&c.inputs), "{k} {}", c.name);
                assert_eq!(c.shape.kind(), k);
                let inputs = k.inputs(&c.shape, c.inputs, 1);
                let wanted: Vec<usize> = k
                    .tensors(&c.shape)
                    .iter()
                    .filter(|t| !t.output)
                    .map(Tensor::elements)
                    .collect();
                let got: Vec<usize> = inputs.iter().map(Vec::len).collect();
                assert_eq!(got, wanted, "{k} {}", c.name);
            }
            for b in k.reference_baselines() {
                assert!(k.baseline(b).is_some(), "{k}: {b}");
            }
            assert!(k.dims().iter().all(|d| d.name == d.name.to_uppercase()));
        }
    }

    #[test]
    fn shapes_parse_print_and_resolve_by_kind() {
        let att = kind("attention");
        let s = Shape::parse(att, "1,16,8192,128:causal").unwrap();
        assert_eq!(s.to_string(), "1,16,8192,128:causal");
        assert_eq!(s.dim("S"), Some(8192));
        assert!(s.flag("causal") && !s.unflagged().flag("causal"));
        assert_eq!(s.unflagged().to_string(), "1,16,8192,128");
        assert_eq!(
            Shape::parse(att, "8192,8192,8192").unwrap_err(),
            "shape \"8192,8192,8192\" is not B,H,S,D (four positive integers, e.g. \
             1,64,1024,128)"
        );
        let gemm = kind("gemm");
        assert_eq!(
            Shape::parse(gemm, "1,64,1024,128").unwrap_err(),
            "shape \"1,64,1024,128\" is not M,N,K (three positive integers, e.g. \
             8192,8192,8192)"
        );
        assert_eq!(
            Shape::parse(gemm, "8,8,8:causal").unwrap_err(),
            "shape \"8,8,8:causal\": \"causal\" is not a flag of gemm (it has no flags)"
        );
        assert_eq!(
            Shape::parse(att, "1,2,3,4:casual").unwrap_err(),
            "shape \"1,2,3,4:casual\": \"casual\" is not a flag of attention (it has :causal)"
        );
        for bad in ["", "1,,2", "0,1,1", "1,x", "1,2:", "1,2,3,4,5,6,7"] {
            assert!(ShapeText::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(att.shape_usage(), "B,H,S,D[:causal]");
        assert_eq!(gemm.shape_usage(), "M,N,K");
    }

    #[test]
    fn shapes_round_trip_through_json_and_read_the_old_form() {
        let att = kind("attention");
        let s = Shape::parse(att, "4,32,777,128:causal").unwrap();
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"attention","b":4,"h":32,"s":777,"d":128,"causal":true}"#
        );
        assert_eq!(serde_json::from_str::<Shape>(&json).unwrap(), s);
        let old: Shape = serde_json::from_str(r#"{"b":1,"h":64,"s":1024,"d":128}"#).unwrap();
        assert_eq!(old, Shape::parse(att, "1,64,1024,128").unwrap());
        let g: Shape =
            serde_json::from_str(r#"{"kind":"gemm","m":4000,"n":4000,"k":4000}"#).unwrap();
        assert_eq!(g.to_string(), "4000,4000,4000");
        for bad in [
            r#"{"kind":"gemm","m":1,"n":1}"#,
            r#"{"kind":"gemm","m":1,"n":1,"k":1,"x":2}"#,
            r#"{"kind":"conv","m":1}"#,
            r#"{"b":1,"h":1,"s":1,"d":1,"causal":"yes"}"#,
            r#"{"b":0,"h":1,"s":1,"d":1}"#,
        ] {
            assert!(serde_json::from_str::<Shape>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shapes_order_plain_first_then_by_size() {
        let att = kind("attention");
        let p = |t| Shape::parse(att, t).unwrap();
        let mut v = [
            p("1,16,8192,128:causal"),
            p("1,16,8192,128"),
            p("1,64,1024,128"),
        ];
        v.sort_by(Shape::size_order);
        let shown: Vec<String> = v.iter().map(Shape::to_string).collect();
        assert_eq!(
            shown,
            ["1,64,1024,128", "1,16,8192,128", "1,16,8192,128:causal"]
        );
    }

    #[test]
    fn sampled_rows_are_distinct_in_range_with_the_edges() {
        let rows = sample_distinct_rows(1000, 16, 3);
        assert_eq!(rows.len(), 16);
        assert!(rows.contains(&0) && rows.contains(&999));
        assert!(rows.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(rows, sample_distinct_rows(1000, 16, 3));
        assert_ne!(rows, sample_distinct_rows(1000, 16, 4));
        assert_eq!(sample_distinct_rows(7, 16, 3), (0..7).collect::<Vec<_>>());
        assert_eq!(sample_distinct_rows(1, 16, 3), vec![0]);
        assert_eq!(sample_distinct_rows(1000, 1, 3), vec![0, 999]);
    }
}
