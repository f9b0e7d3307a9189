//! The `.npy` header: read by numpy's rules (the dict literal parsed by [`super::pyliteral`],
//! the type string by `npyz`), written with `npyz`; the data after it is handled in chunks by
//! [`super::input`] and [`super::output`], since `npyz` reads and writes one element at a time.

use super::error::FileError;
use super::pyliteral::{self, Value};
use crate::keys::DType;
use npyz::{Endianness, TypeChar, TypeStr, WriterBuilder};
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// What a `.npy` file's header promises: a C-order array of shape `shape`, `len` keys of type
/// `dtype` in all, whose data starts `data_offset` bytes into the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NpyLayout {
    pub dtype: DType,
    pub shape: Vec<u64>,
    pub len: u64,
    pub data_offset: u64,
}

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Reads and checks the header of the `.npy` file `file` (opened from `path`), by numpy's own
/// rules (`numpy.lib.format.read_array_header_*`): versions 1.0, 2.0 and 3.0; a Python dict
/// literal with exactly the keys `descr`, `fortran_order` (a bool) and `shape` (a tuple of
/// ints). Arrays of any number of dimensions are read (which ones a caller takes is its own
/// choice); a 1-D array is accepted in either order, its layout being the same, others only in
/// C order. The shape's keys and bytes must be countable in a `u64`.
pub(crate) fn read_header(path: &Path, file: &File) -> Result<NpyLayout, FileError> {
    let read_err = |source| FileError::Read {
        path: path.to_owned(),
        source,
    };
    let bad = |reason: String| FileError::BadHeader {
        path: path.into(),
        reason,
    };
    let mut reader = BufReader::new(file);
    reader.seek(SeekFrom::Start(0)).map_err(read_err)?;
    let mut read_exact = |buf: &mut [u8]| match reader.read_exact(buf) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            Err(FileError::TruncatedHeader { path: path.into() })
        }
        Err(e) => Err(read_err(e)),
    };
    let mut magic = [0; MAGIC.len()];
    match read_exact(&mut magic) {
        Ok(()) if &magic == MAGIC => {}
        Ok(()) | Err(FileError::TruncatedHeader { .. }) => {
            return Err(FileError::NotNpy { path: path.into() });
        }
        Err(e) => return Err(e),
    }
    let mut version = [0; 2];
    read_exact(&mut version)?;
    let len_bytes = match version {
        [1, 0] => 2,
        [2, 0] | [3, 0] => 4,
        [major, minor] => {
            return Err(bad(format!(
                "format version {major}.{minor}, where numpy knows 1.0, 2.0 and 3.0"
            )));
        }
    };
    let mut len = [0; 4];
    read_exact(&mut len[..len_bytes])?;
    let header_len = u32::from_le_bytes(len) as usize;
    let mut header = vec![0; header_len];
    read_exact(&mut header)?;
    let data_offset = (MAGIC.len() + 2 + len_bytes + header_len) as u64;
    let text: String = if version[0] == 3 {
        String::from_utf8(header).map_err(|_| bad("the header is not UTF-8".into()))?
    } else {
        // Latin-1: each byte is the code point of its value.
        header.iter().map(|&b| char::from(b)).collect()
    };
    let dict = match pyliteral::parse(&text).map_err(bad)? {
        Value::Dict(dict) => dict,
        other => {
            return Err(bad(format!(
                "the header is {} in Python, not a dict",
                other.type_name()
            )));
        }
    };
    let mut keys: Vec<&str> = dict
        .iter()
        .map(|(k, _)| match k {
            Value::Str(s) => s.as_str(),
            _ => "(not a string)",
        })
        .collect();
    keys.sort_unstable();
    if keys != ["descr", "fortran_order", "shape"] {
        return Err(bad(format!(
            "its keys are {}, not exactly 'descr', 'fortran_order' and 'shape'",
            keys.iter()
                .map(|k| format!("'{k}'"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let get = |key: &str| {
        dict.iter()
            .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
            .map(|(_, v)| v)
            .expect("the three keys are there")
    };
    let fortran = match get("fortran_order") {
        Value::Bool(b) => *b,
        other => {
            return Err(bad(format!(
                "fortran_order is {}, not a bool",
                other.type_name()
            )));
        }
    };
    let shape: Vec<u64> = match get("shape") {
        Value::Tuple(dims) => dims
            .iter()
            .map(|d| match d {
                Value::Int(n) => u64::try_from(*n)
                    .map_err(|_| bad(format!("shape has a negative dimension, {n}"))),
                Value::Bool(b) => Ok(u64::from(*b)),
                other => Err(bad(format!(
                    "shape holds {}, not only ints",
                    other.type_name()
                ))),
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(bad(format!("shape is {}, not a tuple", other.type_name())));
        }
    };
    let dtype = match get("descr") {
        Value::Str(descr) => {
            let ty: TypeStr = descr
                .parse()
                .map_err(|_| bad(format!("descr '{descr}' is not a type string numpy writes")))?;
            key_type(path, &npyz::DType::Plain(ty))?
        }
        Value::List(_) => {
            return Err(FileError::UnsupportedDtype {
                path: path.into(),
                descr: "[...]".into(),
                why: "a structured dtype",
            });
        }
        other => {
            return Err(bad(format!(
                "descr is {}, not a string or list",
                other.type_name()
            )));
        }
    };
    if fortran && shape.len() > 1 {
        return Err(FileError::FortranOrder { path: path.into() });
    }
    // A zero anywhere makes an empty array, whatever the product of the other dimensions.
    let len = if shape.contains(&0) {
        Some(0)
    } else {
        shape.iter().try_fold(1u64, |len, &d| len.checked_mul(d))
    };
    let Some(len) = len.filter(|len| len.checked_mul(super::key_bytes(dtype) as u64).is_some())
    else {
        return Err(FileError::ShapeOverflow {
            path: path.into(),
            shape,
            dtype,
        });
    };
    Ok(NpyLayout {
        dtype,
        shape,
        len,
        data_offset,
    })
}

/// The key type of a `.npy` dtype, or why it is not one.
fn key_type(path: &Path, dtype: &npyz::DType) -> Result<DType, FileError> {
    let unsupported = |why| FileError::UnsupportedDtype {
        path: path.into(),
        descr: match dtype {
            npyz::DType::Plain(ty) => ty.to_string(),
            _ => dtype.descr(),
        },
        why,
    };
    let npyz::DType::Plain(ty) = dtype else {
        return Err(unsupported("a structured or sub-array dtype"));
    };
    let dtype = match (ty.type_char(), ty.num_bytes()) {
        (TypeChar::Uint, Some(4)) => DType::U32,
        (TypeChar::Int, Some(4)) => DType::I32,
        (TypeChar::Float, Some(4)) => DType::F32,
        (TypeChar::Uint, Some(8)) => DType::U64,
        (TypeChar::Int, Some(8)) => DType::I64,
        (TypeChar::Float, Some(8)) => DType::F64,
        (TypeChar::Uint | TypeChar::Int, _) => {
            return Err(unsupported("an integer width other than 4 or 8 bytes"));
        }
        (TypeChar::Float, _) => return Err(unsupported("a float width other than 4 or 8 bytes")),
        (TypeChar::Bool, _) => return Err(unsupported("bool")),
        (TypeChar::Complex, _) => return Err(unsupported("complex")),
        (TypeChar::Object, _) => return Err(unsupported("Python objects")),
        (TypeChar::ByteStr | TypeChar::UnicodeStr | TypeChar::RawData, _) => {
            return Err(unsupported("strings or bytes"));
        }
        (TypeChar::TimeDelta | TypeChar::DateTime, _) => return Err(unsupported("dates or times")),
        _ => return Err(unsupported("not a number type")),
    };
    if ty.endianness() != Endianness::Little {
        return Err(unsupported(
            "big-endian; convert it with numpy's a.astype(a.dtype.newbyteorder('<'))",
        ));
    }
    Ok(dtype)
}

/// The `.npy` dtype of a key type: little-endian, as gpusort writes every file.
fn npy_dtype(dtype: DType) -> npyz::DType {
    let descr = match dtype {
        DType::U32 => "<u4",
        DType::I32 => "<i4",
        DType::F32 => "<f4",
        DType::U64 => "<u8",
        DType::I64 => "<i8",
        DType::F64 => "<f8",
    };
    let ty: TypeStr = descr.parse().expect("a valid type string");
    npyz::DType::Plain(ty)
}

/// Writes the header of a C-order array of shape `shape` of keys of type `dtype`.
pub(crate) fn write_header(out: &mut impl Write, dtype: DType, shape: &[u64]) -> io::Result<()> {
    npyz::WriteOptions::new_header_only()
        .dtype(npy_dtype(dtype))
        .shape(shape)
        .writer(out)
        .write_header_only()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `header` as a version 1.0 `.npy` file with no data, read back.
    fn parse(header: &str) -> Result<NpyLayout, FileError> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&[1, 0]);
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&bytes).unwrap();
        read_header(Path::new("a.npy"), &file)
    }

    fn dict(descr: &str, fortran: &str, shape: &str) -> String {
        format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}\n")
    }

    #[test]
    fn shapes_of_every_rank_round_trip() {
        for shape in [
            &[][..],
            &[5],
            &[0],
            &[2, 3],
            &[3, 0],
            &[0, 3],
            &[2, 3, 4],
            &[1, 1, 1, 7],
        ] {
            let mut bytes = Vec::new();
            write_header(&mut bytes, DType::I64, shape).unwrap();
            let mut file = tempfile::tempfile().unwrap();
            file.write_all(&bytes).unwrap();
            let layout = read_header(Path::new("a.npy"), &file).unwrap();
            assert_eq!(layout.shape, shape);
            assert_eq!(layout.len, shape.iter().product::<u64>(), "{shape:?}");
            assert_eq!(
                (layout.dtype, layout.data_offset),
                (DType::I64, bytes.len() as u64)
            );
        }
    }

    #[test]
    fn two_dimensional_headers_as_numpy_writes_them() {
        let layout = parse(&dict("<f4", "False", "(2, 3)")).unwrap();
        assert_eq!(
            (layout.dtype, layout.shape, layout.len),
            (DType::F32, vec![2, 3], 6)
        );
        // Python's spellings of the same tuple.
        for shape in ["(2,3)", "(2, 3,)", "( 2 , 3 )"] {
            assert_eq!(
                parse(&dict("<u8", "False", shape)).unwrap().len,
                6,
                "{shape}"
            );
        }
        // A zero dimension empties the array whatever the others (their product overflows).
        let empty = parse(&dict("<u4", "False", "(0, 18446744073709551615, 3)")).unwrap();
        assert_eq!(empty.len, 0);
    }

    #[test]
    fn fortran_order_is_refused_above_one_dimension() {
        assert!(matches!(
            parse(&dict("<i4", "True", "(2, 3)")),
            Err(FileError::FortranOrder { .. })
        ));
        assert_eq!(parse(&dict("<i4", "True", "(4,)")).unwrap().len, 4);
    }

    #[test]
    fn shapes_beyond_2_to_the_64_bytes_are_refused() {
        for (descr, shape) in [
            ("<f4", "(1099511627776, 1099511627776)"),
            ("<f8", "(4611686018427387904, 1)"),
            ("<u4", "(4611686018427387904, 2)"),
        ] {
            match parse(&dict(descr, "False", shape)) {
                Err(e @ FileError::ShapeOverflow { .. }) => {
                    assert!(e.to_string().contains(shape), "{e}");
                }
                other => panic!("{shape}: {other:?}"),
            }
        }
        // Exactly 2^64 - 4 bytes: countable.
        let most = parse(&dict("<u4", "False", "(4611686018427387903, 1)")).unwrap();
        assert_eq!(most.len, (1 << 62) - 1);
    }
}
