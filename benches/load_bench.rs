//! Mesh loading speed: writes a closed surface of about 870,000 triangles
//! (a subdivided octahedron on a sphere, the size of the Stanford dragon) as
//! binary PLY, ASCII PLY, binary STL and OBJ into `target/load_bench/`, then
//! times `fmbgrid::mesh::load` on each (median of 5 runs) and building its
//! frames.
//!
//! `cargo bench --bench load_bench [-- --subdivisions S --runs R --csv FILE]`
//! (defaults 330 subdivisions per octant edge, `8 S²` triangles, and 5
//! runs; `--csv` appends one row per file to FILE, columns
//! `LOAD_HEADER`).

use std::io::Write;
use std::path::Path;
use std::time::Instant;

#[path = "support/args.rs"]
mod cli;
#[path = "support/results.rs"]
mod results;

/// Columns of `load_bench.csv` after `machine,commit,date`: one row per
/// file format, the median load time and the time to build its frames.
const LOAD_HEADER: &str = "bench,file,triangles,bytes,runs,load_ms,frames_ms";

/// An octahedron subdivided `n` times per edge, projected on the unit
/// sphere: `8 n²` triangles, vertices shared.
fn sphere(n: usize) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
    let mut vertices = Vec::new();
    let mut index = std::collections::HashMap::new();
    let mut vertex = |p: [f64; 3]| -> u32 {
        let l = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
        let q = p.map(|x| x / l);
        let key = q.map(|x| (x * 1e9).round() as i64);
        *index.entry(key).or_insert_with(|| {
            vertices.push(q);
            (vertices.len() - 1) as u32
        })
    };
    let mut triangles = Vec::new();
    for sx in [-1.0, 1.0] {
        for sy in [-1.0, 1.0] {
            for sz in [-1.0, 1.0] {
                let (a, b, c) = ([sx, 0.0, 0.0], [0.0, sy, 0.0], [0.0, 0.0, sz]);
                let at = |i: usize, j: usize| -> [f64; 3] {
                    let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
                    std::array::from_fn(|k| a[k] * (1.0 - u - v) + b[k] * u + c[k] * v)
                };
                let flip = sx * sy * sz < 0.0;
                for i in 0..n {
                    for j in 0..n - i {
                        let (p, q, r) = (vertex(at(i, j)), vertex(at(i + 1, j)), vertex(at(i, j + 1)));
                        triangles.push(if flip { [p, r, q] } else { [p, q, r] });
                        if i + j + 1 < n {
                            let s = vertex(at(i + 1, j + 1));
                            triangles.push(if flip { [q, r, s] } else { [q, s, r] });
                        }
                    }
                }
            }
        }
    }
    (vertices, triangles)
}

fn write_all(dir: &Path, v: &[[f64; 3]], t: &[[u32; 3]]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("sphere_bin.ply"))?);
    let header = |enc: &str| {
        format!(
            "ply\nformat {enc} 1.0\nelement vertex {}\nproperty float x\nproperty float y\nproperty float z\n\
             element face {}\nproperty list uchar int vertex_indices\nend_header\n",
            v.len(),
            t.len()
        )
    };
    f.write_all(header("binary_little_endian").as_bytes())?;
    for p in v {
        for x in p {
            f.write_all(&(*x as f32).to_le_bytes())?;
        }
    }
    for tri in t {
        f.write_all(&[3u8])?;
        for i in tri {
            f.write_all(&(*i as i32).to_le_bytes())?;
        }
    }
    drop(f);
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("sphere_ascii.ply"))?);
    f.write_all(header("ascii").as_bytes())?;
    for p in v {
        writeln!(f, "{} {} {}", p[0] as f32, p[1] as f32, p[2] as f32)?;
    }
    for tri in t {
        writeln!(f, "3 {} {} {}", tri[0], tri[1], tri[2])?;
    }
    drop(f);
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("sphere.stl"))?);
    f.write_all(&[0u8; 80])?;
    f.write_all(&(t.len() as u32).to_le_bytes())?;
    for tri in t {
        f.write_all(&[0u8; 12])?;
        for &i in tri {
            for x in v[i as usize] {
                f.write_all(&(x as f32).to_le_bytes())?;
            }
        }
        f.write_all(&[0u8; 2])?;
    }
    drop(f);
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("sphere.obj"))?);
    for p in v {
        writeln!(f, "v {} {} {}", p[0], p[1], p[2])?;
    }
    for tri in t {
        writeln!(f, "f {} {} {}", tri[0] + 1, tri[1] + 1, tri[2] + 1)?;
    }
    Ok(())
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = cli::args();
    let number = |name: &str, default: usize| -> Result<usize, Box<dyn std::error::Error>> {
        Ok(cli::value(&args, name).map(|v| v.parse()).transpose()?.unwrap_or(default))
    };
    let (subdivisions, runs) = (number("--subdivisions", 330)?.max(1), number("--runs", 5)?.max(1));
    let (v, t) = sphere(subdivisions);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/load_bench");
    write_all(&dir, &v, &t)?;
    println!("{} vertices, {} triangles\n", v.len(), t.len());
    println!("| file | bytes | load ms (median of {runs}) | frames ms |");
    println!("|---|---|---|---|");
    let mut csv = Vec::new();
    for name in ["sphere_bin.ply", "sphere_ascii.ply", "sphere.stl", "sphere.obj"] {
        let path = dir.join(name);
        let bytes = std::fs::metadata(&path)?.len();
        let mut times = Vec::new();
        let mut mesh = None;
        for _ in 0..runs {
            let start = Instant::now();
            mesh = Some(fmbgrid::mesh::load(&path)?);
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
        let mesh = mesh.ok_or("no run")?;
        assert_eq!(mesh.triangles.len(), t.len());
        let start = Instant::now();
        let (frames, report) = mesh.frames(1e-3);
        let frames_ms = start.elapsed().as_secs_f64() * 1e3;
        assert_eq!(frames.len() + report.degenerate + report.invalid, t.len());
        let load_ms = median(times);
        println!("| {name} | {bytes} | {load_ms:.1} | {frames_ms:.1} |");
        csv.push(format!("load_bench,{name},{},{bytes},{runs},{load_ms:.1},{frames_ms:.1}", t.len()));
    }
    results::report_lines(cli::value(&args, "--csv").as_deref(), LOAD_HEADER, &csv);
    Ok(())
}
