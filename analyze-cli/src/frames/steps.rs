//! The `steps` table's columns, gathered chunk by chunk as Arrow arrays: `export` hands them
//! to the Parquet encoder as they are (its strings as dictionaries), or as a frame to the CSV
//! and JSON-lines writers. A row per stats line (decode / periodic stats, prefill,
//! speculative metrics); rows are kept as plain vectors, not a frame grown chunk by chunk,
//! so that gathering a row group costs a copy of its values and nothing more.

use crate::ingest::series::{PointKind, Series};
use polars::prelude::*;
use polars_arrow::array::{DictionaryArray, MutableBinaryViewArray, PrimitiveArray, Utf8ViewArray};
use polars_arrow::bitmap::{Bitmap, MutableBitmap};
use polars_arrow::datatypes::{ArrowDataType, IntegerType, TimeUnit as ArrowTimeUnit};

/// The values of `kind`, by the index a row keeps.
const KINDS: [&str; 4] = ["decode", "stats", "spec", "prefill"];
const STATS: u8 = 1;
const SPEC: u8 = 2;
const PREFILL: u8 = 3;

/// How the string columns (`instance`, `engine`, `kind`) are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strings {
    /// One string per row, as a frame holds them.
    Plain,
    /// The distinct values once, and a key per row: what Parquet's dictionary encoding
    /// writes, built here from what is known (a few kinds, one instance per chunk) rather
    /// than found again by hashing every row.
    Dictionary,
}

/// The `steps` rows gathered so far, column by column. Absent values are NaN (gauges) and
/// become nulls in the arrays.
#[derive(Debug, Default)]
pub struct StepColumns {
    /// Runs of rows of one instance: its name, its engine, and how many rows.
    owners: Vec<(String, Option<&'static str>, usize)>,
    /// Indices into [`KINDS`].
    kind: Vec<u8>,
    ts: Vec<i64>,
    running: Vec<f32>,
    waiting: Vec<f32>,
    gen_tps: Vec<f64>,
    prompt_tps: Vec<f64>,
    kv_usage: Vec<f32>,
    accept_len: Vec<f32>,
    /// A prefill row's new prompt tokens (NaN on the others, which have none; a `u32` is
    /// exact in an `f64`).
    new_tokens: Vec<f64>,
}

/// A number column of the rows, as gathered: NaN (or an infinity) where a row has none.
#[derive(Debug, Clone, Copy)]
pub enum Numbers<'a> {
    /// Written as `f64`.
    F32(&'a [f32]),
    F64(&'a [f64]),
    /// Counts, written as `i64` (a negative one, never logged, would be 0).
    Count32(&'a [f32]),
    Count64(&'a [f64]),
}

/// A column of [`StepColumns::columns`].
pub enum StepColumn<'a> {
    /// A label (strings laid out as asked, or the stamps).
    Label(ArrayRef),
    /// A number column the rows keep.
    Numbers(Numbers<'a>),
    /// A documented column the rows do not keep: all null, of this type (made into an
    /// array only where asked: [`StepColumn::null_array`]).
    Null(&'static str, DataType),
}

impl StepColumn<'_> {
    /// The all-null array of a [`StepColumn::Null`] of `rows` rows.
    pub fn null_array(name: &str, dtype: &DataType, rows: usize) -> ArrayRef {
        polars::series::Series::full_null(name.into(), rows, dtype)
            .to_arrow(0, CompatLevel::newest())
    }
}

impl Numbers<'_> {
    /// The column as an Arrow array.
    pub fn array(self) -> ArrayRef {
        match self {
            Numbers::F32(v) => float(v),
            Numbers::F64(v) => float(v),
            Numbers::Count32(v) => count(v),
            Numbers::Count64(v) => count(v),
        }
    }
}

impl StepColumns {
    /// Rows gathered.
    pub fn len(&self) -> usize {
        self.ts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ts.is_empty()
    }

    /// Adds the stats lines of one chunk of an instance, in the series' order.
    pub fn push(&mut self, instance: &str, engine: Option<&'static str>, series: &Series) {
        let n = series.points.len() + series.prefill.len();
        if n == 0 {
            return;
        }
        match self.owners.last_mut() {
            Some((name, e, rows)) if name == instance && *e == engine => *rows += n,
            _ => self.owners.push((instance.to_string(), engine, n)),
        }
        // (SGLang calls its periodic line a decode batch, vLLM its stats)
        let stats = if engine == Some("vllm") { STATS } else { 0 };
        self.kind.reserve(n);
        self.ts.reserve(n);
        self.running.reserve(n);
        self.waiting.reserve(n);
        self.gen_tps.reserve(n);
        self.prompt_tps.reserve(n);
        self.kv_usage.reserve(n);
        self.accept_len.reserve(n);
        self.new_tokens.reserve(n);
        // the points between prefill stamps a column at a time (a prefill stamp comes
        // before the point its `at` names, as in `Series::steps`)
        let mut from = 0;
        for p in &series.prefill {
            let to = (p.at as usize).clamp(from, series.points.len());
            self.points(series, from..to, stats);
            from = to;
            self.kind.push(PREFILL);
            self.ts.push(p.ts);
            self.running.push(f32::NAN);
            self.waiting.push(f32::NAN);
            self.gen_tps.push(f64::NAN);
            self.prompt_tps.push(f64::NAN);
            self.kv_usage.push(f32::NAN);
            self.accept_len.push(f32::NAN);
            self.new_tokens.push(f64::from(p.new_tokens));
        }
        self.points(series, from..series.points.len(), stats);
    }

    /// Adds the points of `range`, whose periodic stats are of kind `stats`.
    fn points(&mut self, series: &Series, range: std::ops::Range<usize>, stats: u8) {
        let points = &series.points[range.clone()];
        if series.spec.is_empty() {
            self.kind.resize(self.kind.len() + points.len(), stats);
        } else {
            self.kind
                .extend(range.clone().map(|i| match series.kind(i) {
                    PointKind::Stats => stats,
                    PointKind::Spec => SPEC,
                }));
        }
        if series.prompt_tps.is_empty() {
            self.prompt_tps
                .resize(self.prompt_tps.len() + points.len(), f64::NAN);
        } else {
            self.prompt_tps.extend(range.map(|i| series.prompt_tps(i)));
        }
        self.ts.extend(points.iter().map(|p| p.ts));
        self.running.extend(points.iter().map(|p| p.running));
        self.waiting.extend(points.iter().map(|p| p.waiting));
        self.gen_tps.extend(points.iter().map(|p| p.gen_tps));
        self.kv_usage.extend(points.iter().map(|p| p.kv_usage));
        self.accept_len.extend(points.iter().map(|p| p.accept_len));
        self.new_tokens
            .resize(self.new_tokens.len() + points.len(), f64::NAN);
    }

    /// Empties it, keeping the room it has.
    pub fn clear(&mut self) {
        self.owners.clear();
        self.kind.clear();
        self.ts.clear();
        self.running.clear();
        self.waiting.clear();
        self.gen_tps.clear();
        self.prompt_tps.clear();
        self.kv_usage.clear();
        self.accept_len.clear();
        self.new_tokens.clear();
    }

    /// The columns as arrays, in the schema's order, with `run` (the run's label) first.
    pub fn arrays(
        &self,
        strings: Strings,
        run: &str,
    ) -> PolarsResult<Vec<(&'static str, ArrayRef)>> {
        Ok(self
            .columns(strings, run)?
            .into_iter()
            .map(|(name, c)| {
                let array = match c {
                    StepColumn::Label(a) => a,
                    StepColumn::Null(name, dtype) => {
                        StepColumn::null_array(name, &dtype, self.len())
                    }
                    StepColumn::Numbers(n) => n.array(),
                };
                (name, array)
            })
            .collect())
    }

    /// Every documented column of `steps`, in the schema's order: the labels, the numbers
    /// the rows keep, and the columns a stats line has but the read does not keep (its
    /// source line, ranks, KV slots, …: `tokstat parse` gives them) all null, so that every
    /// file of the table has one schema.
    pub fn columns(
        &self,
        strings: Strings,
        run: &str,
    ) -> PolarsResult<Vec<(&'static str, StepColumn<'_>)>> {
        let mut labels = self.labels(strings, run)?.into_iter().peekable();
        let mut numbers = self.numbers().into_iter().peekable();
        let documented = crate::schema::columns("steps").unwrap_or_default();
        let mut out = Vec::with_capacity(documented.len());
        for &(name, ty, _) in documented {
            let column = if labels.peek().is_some_and(|l| l.0 == name) {
                StepColumn::Label(labels.next().map(|l| l.1).unwrap_or_else(|| unreachable!()))
            } else if numbers.peek().is_some_and(|n| n.0 == name) {
                StepColumn::Numbers(
                    numbers
                        .next()
                        .map(|n| n.1)
                        .unwrap_or_else(|| unreachable!()),
                )
            } else {
                StepColumn::Null(name, crate::schema::dtype(ty))
            };
            out.push((name, column));
        }
        // (a column gathered here that the schema does not name, or names in another
        // order, is a bug of this file: the test below finds it)
        debug_assert!(labels.next().is_none() && numbers.next().is_none());
        Ok(out)
    }

    /// The label columns, in the schema's order: `run`, `instance`, `engine`, `kind` and
    /// `ts`.
    fn labels(&self, strings: Strings, run: &str) -> PolarsResult<Vec<(&'static str, ArrayRef)>> {
        let mut out: Vec<(&'static str, ArrayRef)> = Vec::with_capacity(12);
        out.push((
            "run",
            strings_of(std::iter::once((Some(run), self.len())), strings)?,
        ));
        let names = self
            .owners
            .iter()
            .map(|(name, _, rows)| (Some(name.as_str()), *rows));
        out.push(("instance", strings_of(names, strings)?));
        let engines = self.owners.iter().map(|(_, engine, rows)| (*engine, *rows));
        out.push(("engine", strings_of(engines, strings)?));
        out.push(("kind", kinds(&self.kind, strings)?));
        out.push((
            "ts",
            PrimitiveArray::new(
                ArrowDataType::Timestamp(ArrowTimeUnit::Millisecond, None),
                self.ts.clone().into(),
                None,
            )
            .boxed(),
        ));
        Ok(out)
    }

    /// The number columns the rows keep, in the schema's order.
    fn numbers(&self) -> [(&'static str, Numbers<'_>); 7] {
        [
            ("running", Numbers::Count32(&self.running)),
            ("waiting", Numbers::Count32(&self.waiting)),
            ("gen_tps", Numbers::F64(&self.gen_tps)),
            ("prompt_tps", Numbers::F64(&self.prompt_tps)),
            ("kv_usage", Numbers::F32(&self.kv_usage)),
            ("new_tokens", Numbers::Count64(&self.new_tokens)),
            ("accept_len", Numbers::F32(&self.accept_len)),
        ]
    }

    /// The rows as a frame named and typed as the schema's `steps`, of the run `run`.
    pub fn frame(&self, run: &str) -> PolarsResult<DataFrame> {
        let columns = self
            .arrays(Strings::Plain, run)?
            .into_iter()
            .map(|(name, a)| polars::series::Series::from_arrow(name.into(), a).map(Column::from))
            .collect::<PolarsResult<Vec<_>>>()?;
        DataFrame::new_infer_height(columns)
    }
}

/// A value of a number column: present unless NaN or infinite.
pub trait Number: Copy {
    fn present(self) -> bool;
    fn to_f64(self) -> f64;
    /// As a count (`as` saturates: a negative count, never logged, is 0).
    fn to_u64(self) -> u64;
}

impl Number for f32 {
    #[inline]
    fn present(self) -> bool {
        self.is_finite()
    }
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn to_u64(self) -> u64 {
        self as u64
    }
}

impl Number for f64 {
    #[inline]
    fn present(self) -> bool {
        self.is_finite()
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline]
    fn to_u64(self) -> u64 {
        self as u64
    }
}

/// A validity bitmap of the values present (none when all are), built a byte at a time (a
/// bit at a time took a tenth of the time of writing `steps`).
fn validity<T: Number>(values: &[T]) -> Option<Bitmap> {
    let mut bytes = Vec::with_capacity(values.len().div_ceil(8));
    let mut set = 0;
    for eight in values.chunks(8) {
        let mut byte = 0u8;
        for (i, &v) in eight.iter().enumerate() {
            byte |= u8::from(v.present()) << i;
        }
        set += byte.count_ones() as usize;
        bytes.push(byte);
    }
    (set < values.len()).then(|| Bitmap::from_u8_vec(bytes, values.len()))
}

/// A float column.
fn float<T: Number>(values: &[T]) -> ArrayRef {
    let present = validity(values);
    let values: Vec<f64> = values.iter().map(|&v| v.to_f64()).collect();
    PrimitiveArray::new(ArrowDataType::Float64, values.into(), present).boxed()
}

/// A count logged as a float (`running`, `waiting`) as an integer column.
fn count<T: Number>(values: &[T]) -> ArrayRef {
    let present = validity(values);
    // (signed: Spark reads an unsigned 64-bit column as `decimal(20,0)`; every count fits)
    let ints: Vec<i64> = values
        .iter()
        .map(|&v| if v.present() { v.to_u64() as i64 } else { 0 })
        .collect();
    PrimitiveArray::new(ArrowDataType::Int64, ints.into(), present).boxed()
}

/// A string column given as runs of one value (or null) each.
fn strings_of<'a>(
    runs: impl Iterator<Item = (Option<&'a str>, usize)> + Clone,
    strings: Strings,
) -> PolarsResult<ArrayRef> {
    match strings {
        Strings::Plain => {
            let mut a = MutableBinaryViewArray::<str>::new();
            for (value, rows) in runs {
                match value {
                    Some(v) => a.extend_constant(rows, Some(v)),
                    // (`extend_constant` with a null adds no views in polars 0.55)
                    None => (0..rows).for_each(|_| a.push_null()),
                }
            }
            let a: Utf8ViewArray = a.into();
            Ok(a.boxed())
        }
        Strings::Dictionary => {
            let mut values: Vec<&str> = Vec::new();
            let mut keys: Vec<u32> = Vec::new();
            let mut present = MutableBitmap::new();
            for (value, rows) in runs {
                let key = value.map_or(0, |v| {
                    values.iter().position(|&d| d == v).unwrap_or_else(|| {
                        values.push(v);
                        values.len() - 1
                    }) as u32
                });
                keys.resize(keys.len() + rows, key);
                present.extend_constant(rows, value.is_some());
            }
            let valid = (present.unset_bits() > 0).then(|| present.into());
            dictionary(keys, valid, &values)
        }
    }
}

/// The `kind` column from its indices into [`KINDS`].
fn kinds(kind: &[u8], strings: Strings) -> PolarsResult<ArrayRef> {
    match strings {
        Strings::Plain => {
            let a = Utf8ViewArray::from_slice_values(
                kind.iter()
                    .map(|&k| KINDS[usize::from(k)])
                    .collect::<Vec<_>>(),
            );
            Ok(a.boxed())
        }
        Strings::Dictionary => {
            // only the kinds present are in the dictionary: its statistics are the column's
            let mut key = [u32::MAX; KINDS.len()];
            let mut values = Vec::new();
            for &k in kind {
                let slot = &mut key[usize::from(k)];
                if *slot == u32::MAX {
                    *slot = values.len() as u32;
                    values.push(KINDS[usize::from(k)]);
                }
            }
            let keys = kind.iter().map(|&k| key[usize::from(k)]).collect();
            dictionary(keys, None, &values)
        }
    }
}

/// A string column as a dictionary: `keys` index `values`.
fn dictionary(keys: Vec<u32>, valid: Option<Bitmap>, values: &[&str]) -> PolarsResult<ArrayRef> {
    let keys = PrimitiveArray::new(ArrowDataType::UInt32, keys.into(), valid);
    let values = Utf8ViewArray::from_slice_values(values).boxed();
    let dtype = ArrowDataType::Dictionary(
        IntegerType::UInt32,
        Box::new(ArrowDataType::Utf8View),
        false,
    );
    Ok(DictionaryArray::try_new(dtype, keys, values)?.boxed())
}
