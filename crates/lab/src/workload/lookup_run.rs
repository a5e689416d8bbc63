//! The in-process form of every lookup workload (W1, W2, W3, W5): one
//! variant per value of the sweep and per query mode, the definition's
//! data set loaded through the engine, and clients that look one row up
//! per transaction. [`in_process`] turns any definition into what
//! `turnstile run` drives.

use super::definition::{Dataset, Definition, InProcessForm, Key, ModeUse};
use super::in_process::{random_lookup, with_loader, ClientCtx, InProcess, ParamValue, Params, Setup, Txn, Variant};
use super::{engine, Sizes};
use crate::cli::CliError;
use serde_json::Value as Json;
use std::path::Path;
use turnstile_engine::query::Operand;
use turnstile_engine::Session;

/// `definition`'s in-process form for `setup`.
pub fn in_process(definition: &'static Definition, setup: Setup) -> Result<Box<dyn InProcess>, CliError> {
    match &definition.in_process {
        InProcessForm::Lookup { dataset, params } => {
            Ok(Box::new(LookupRun { definition, dataset: *dataset, params: *params, setup }))
        }
        InProcessForm::Own(make) => make(setup),
    }
}

struct LookupRun {
    definition: &'static Definition,
    dataset: fn(u32, Sizes) -> Dataset,
    params: fn(&Setup) -> Json,
    setup: Setup,
}

impl InProcess for LookupRun {
    fn params_json(&self) -> Json {
        (self.params)(&self.setup)
    }

    /// Every value of the sweep (one point without one), each in every mode.
    fn variants(&self) -> Result<Vec<Variant>, CliError> {
        let values = match &self.definition.sweep {
            Some(sweep) => {
                sweep.check(&self.setup.values)?;
                self.setup
                    .values
                    .iter()
                    .map(|&v| (Params::default().with(sweep.param.key(), ParamValue::Count(v)), v))
                    .collect()
            }
            None => vec![(Params::default(), 0)],
        };
        let use_ = self.definition.modes.in_process;
        let mut out = Vec::new();
        for (params, value) in values {
            for mode in use_.pick(&self.setup.modes) {
                let params = match use_ {
                    ModeUse::Swept => params.clone().with("mode", ParamValue::Name(mode.name())),
                    ModeUse::Fixed(_) => params.clone(),
                };
                out.push(Variant { params, value, mode });
            }
        }
        Ok(out)
    }

    /// One directory per value of the sweep: the modes share it.
    fn data_key(&self, v: &Variant) -> String {
        match &self.definition.sweep {
            Some(sweep) => format!("{}_{}", sweep.param.key(), v.value),
            None => "data".into(),
        }
    }

    fn load(&self, dir: &Path, v: &Variant) -> Result<(), CliError> {
        let data = (self.dataset)(v.value, self.setup.sizes);
        with_loader(dir, |s| engine::load(s, &data.tables, &data.indexes))
    }

    fn client<'a>(&'a self, c: &ClientCtx, v: &'a Variant) -> Result<Txn<'a>, CliError> {
        let data = (self.dataset)(v.value, self.setup.sizes);
        Ok(match data.key {
            Key::Random(max) => {
                random_lookup(engine::query(&data.lookup, Operand::Param(1)), v.mode.into(), max, c.seed)
            }
            Key::Fixed(value) => {
                let q = engine::query(&data.lookup, value);
                Box::new(move |s: &mut Session| {
                    s.query(&q, &[])?;
                    Ok(())
                })
            }
        })
    }
}
