//! The `.npy` header, read and written with `npyz`; the data after it is handled in chunks by
//! [`super::input`] and [`super::output`], since `npyz` reads and writes one element at a time.

use super::error::FileError;
use crate::keys::DType;
use npyz::{Endianness, TypeChar, TypeStr, WriterBuilder};
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// What a `.npy` file's header promises: a 1-D, C-order array of `len` keys of type `dtype`,
/// whose data starts `data_offset` bytes into the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NpyLayout {
    pub dtype: DType,
    pub len: u64,
    pub data_offset: u64,
}

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Reads and checks the header of the `.npy` file `file` (opened from `path`).
pub(crate) fn read_header(path: &Path, file: &File) -> Result<NpyLayout, FileError> {
    let read_err = |source| FileError::Read {
        path: path.to_owned(),
        source,
    };
    let mut reader = BufReader::new(file);
    // Checked here first so that a file that is not a .npy at all gets its own message, not
    // npyz's "magic not found".
    let mut magic = [0; MAGIC.len()];
    match reader.read_exact(&mut magic) {
        Ok(()) if &magic == MAGIC => {}
        Ok(()) => return Err(FileError::NotNpy { path: path.into() }),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            return Err(FileError::NotNpy { path: path.into() });
        }
        Err(e) => return Err(read_err(e)),
    }
    reader.seek(SeekFrom::Start(0)).map_err(read_err)?;
    let header = npyz::NpyHeader::from_reader(&mut reader).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => FileError::TruncatedHeader { path: path.into() },
        io::ErrorKind::InvalidData => FileError::BadHeader {
            path: path.into(),
            reason: e.to_string(),
        },
        _ => read_err(e),
    })?;
    // The BufReader's position accounts for what it has buffered: it is where the data starts.
    let data_offset = reader.stream_position().map_err(read_err)?;

    let dtype = key_type(path, &header.dtype())?;
    if header.order() == npyz::Order::Fortran {
        return Err(FileError::FortranOrder { path: path.into() });
    }
    let &[len] = header.shape() else {
        return Err(FileError::NotOneDimensional {
            path: path.into(),
            shape: header.shape().to_vec(),
        });
    };
    Ok(NpyLayout {
        dtype,
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

/// Writes the header of a 1-D, C-order array of `len` keys of type `dtype`.
pub(crate) fn write_header(out: &mut impl Write, dtype: DType, len: u64) -> io::Result<()> {
    npyz::WriteOptions::new_header_only()
        .dtype(npy_dtype(dtype))
        .shape(&[len])
        .writer(out)
        .write_header_only()?;
    Ok(())
}
