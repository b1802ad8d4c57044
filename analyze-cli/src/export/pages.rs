//! Parquet data pages of optional number columns, made here rather than by polars'
//! encoder: it takes each value's definition level, each present value and each min / max
//! comparison through a generic per-value path, which made most of the cost of writing
//! `steps` (see bench/README.md). Here one pass over the values makes the definition levels
//! (one bit-packed run: the layout of a validity bitmap), gathers the present values and
//! their statistics; then floats are written plain, and counts delta-packed (a count moves
//! little from one line to the next: the page zstd then compresses is a tenth the size).

use crate::frames::steps::Number;
use polars_parquet::parquet::encoding::Encoding;
use polars_parquet::parquet::metadata::Descriptor;
use polars_parquet::parquet::page::{DataPage, DataPageHeader, DataPageHeaderV1, Page};
use polars_parquet::parquet::schema::types::PrimitiveType;
use polars_parquet::parquet::statistics::PrimitiveStatistics;
use polars_parquet::parquet::types::NativeType;
use polars_parquet::parquet::CowBuffer;

/// A page of floats, written plain as `f64`.
pub fn floats<T: Number>(values: &[T], type_: &PrimitiveType) -> Page {
    let (mut buf, present) = levels(values, T::to_f64);
    for v in &present {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    page(buf, values.len(), &present, type_, Encoding::Plain)
}

/// A page of counts, written delta-packed as `INT64` (signed: see `frames::steps`).
pub fn counts<T: Number>(values: &[T], type_: &PrimitiveType) -> Page {
    let (mut buf, present) = levels(values, |v: T| v.to_u64() as i64);
    delta_binary_packed(&mut buf, &present);
    page(
        buf,
        values.len(),
        &present,
        type_,
        Encoding::DeltaBinaryPacked,
    )
}

/// The start of a version-1 page of `values`: its definition levels (their length, then a
/// bit-packed run: (groups of 8 << 1) | 1, then one bit per value, first value lowest; bits
/// past the last value are 0, readers stop at `num_values`); and the present values, each
/// made a `P` by `to`.
fn levels<T: Number, P: Copy + Default>(values: &[T], to: impl Fn(T) -> P) -> (Vec<u8>, Vec<P>) {
    let n = values.len();
    let groups = n.div_ceil(8);
    let mut buf = Vec::with_capacity(16 + groups + n * 8);
    buf.extend_from_slice(&[0; 4]);
    uleb128(&mut buf, ((groups as u64) << 1) | 1);
    let at = buf.len();
    let len = (at + groups - 4) as u32;
    buf[..4].copy_from_slice(&len.to_le_bytes());
    buf.resize(at + groups, 0);
    // (branch-free: every value is written, and kept only if present; whether a gauge is
    // present follows the kinds of lines, which a branch mispredicted)
    let mut present = vec![P::default(); n];
    let mut kept = 0;
    for (g, eight) in values.chunks(8).enumerate() {
        let mut byte = 0u8;
        for (i, &v) in eight.iter().enumerate() {
            let p = v.present();
            byte |= u8::from(p) << i;
            present[kept] = to(v);
            kept += usize::from(p);
        }
        buf[at + g] = byte;
    }
    present.truncate(kept);
    (buf, present)
}

/// The page of `n` values of which `present` are present, its buffer made, with min, max and
/// null count statistics.
fn page<P: NativeType + PartialOrd>(
    buf: Vec<u8>,
    n: usize,
    present: &[P],
    type_: &PrimitiveType,
    encoding: Encoding,
) -> Page {
    let (mut min, mut max): (Option<P>, Option<P>) = (None, None);
    for &v in present {
        if min.is_none_or(|m| v < m) {
            min = Some(v);
        }
        if max.is_none_or(|m| v > m) {
            max = Some(v);
        }
    }
    let statistics = PrimitiveStatistics::<P> {
        primitive_type: type_.clone(),
        null_count: Some((n - present.len()) as i64),
        distinct_count: None,
        min_value: min,
        max_value: max,
    }
    .serialize();
    let header = DataPageHeader::V1(DataPageHeaderV1 {
        num_values: n as i32,
        encoding: encoding.into(),
        definition_level_encoding: Encoding::Rle.into(),
        repetition_level_encoding: Encoding::Rle.into(),
        statistics: Some(statistics),
    });
    let descriptor = Descriptor {
        primitive_type: type_.clone(),
        max_def_level: 0,
        max_rep_level: 0,
    };
    Page::Data(DataPage::new(header, CowBuffer::Owned(buf), descriptor, n))
}

/// Values per block of `DELTA_BINARY_PACKED`, and per miniblock (four to a block).
const BLOCK: usize = 128;
const MINIBLOCK: usize = 32;

/// `values` as Parquet's `DELTA_BINARY_PACKED`: a header (block size, miniblocks per block,
/// value count, first value), then per block of 128 deltas its least delta and, per
/// miniblock of 32, the bits each delta above that least one needs, and the deltas so
/// packed (least significant bit first; a last miniblock is filled with zeros, miniblocks
/// past the last value are left out with a width of 0).
fn delta_binary_packed(buf: &mut Vec<u8>, values: &[i64]) {
    uleb128(buf, BLOCK as u64);
    uleb128(buf, (BLOCK / MINIBLOCK) as u64);
    uleb128(buf, values.len() as u64);
    uleb128(buf, zigzag(values.first().copied().unwrap_or(0)));
    let deltas: Vec<i64> = values.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect();
    for block in deltas.chunks(BLOCK) {
        let least = block.iter().copied().min().unwrap_or(0);
        uleb128(buf, zigzag(least));
        let mut widths = [0u8; BLOCK / MINIBLOCK];
        for (w, mini) in widths.iter_mut().zip(block.chunks(MINIBLOCK)) {
            let most = mini
                .iter()
                .map(|&d| d.wrapping_sub(least) as u64)
                .max()
                .unwrap_or(0);
            *w = (64 - most.leading_zeros()) as u8;
        }
        buf.extend_from_slice(&widths);
        for (&w, mini) in widths.iter().zip(block.chunks(MINIBLOCK)) {
            pack(buf, mini, least, u32::from(w));
        }
    }
}

/// A miniblock's deltas above `least`, `width` bits each, least significant bit first (32
/// values, the missing ones 0).
fn pack(buf: &mut Vec<u8>, deltas: &[i64], least: i64, width: u32) {
    if width == 0 {
        return;
    }
    let mut acc: u128 = 0;
    let mut bits = 0u32;
    for i in 0..MINIBLOCK {
        let v = deltas.get(i).map_or(0, |&d| d.wrapping_sub(least) as u64);
        acc |= u128::from(v) << bits;
        bits += width;
        while bits >= 8 {
            buf.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn uleb128(buf: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            buf.push(byte);
            return;
        }
        buf.push(byte | 0x80);
    }
}
