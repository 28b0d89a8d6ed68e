//! The parry (f64) baseline that the scene programs, `scene_bench` and
//! `mesh_bench`, time side by side with fmbgrid (included with `#[path]`):
//! one parry shape per frame, the swept box of every frame over the step,
//! the fixed frames' `Bvh` built once, the moving frames' `Bvh` rebuilt
//! every step, the candidate pairs of frames of different bodies, and
//! parry's narrow phase on each candidate (`intersection_test` when the two
//! frames have the same displacement, `cast_shapes` over the step
//! otherwise). [`world3`] is over `parry3d_f64`, [`world2`] over
//! `parry2d_f64`; each program keeps its own timing, bookkeeping and other
//! broad phases around it.
#![allow(dead_code)]

/// The parry world of one dimension, in a module named `$module` over the
/// crate `$parry` (`parry2d_f64` or `parry3d_f64`).
macro_rules! parry_world {
    ($(#[$doc:meta])* $module:ident, $parry:ident) => {
        $(#[$doc])*
        pub mod $module {
            use std::time::Instant;

            use $parry::bounding_volume::{Aabb, BoundingVolume};
            use $parry::math::{Pose, Vector};
            use $parry::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};
            use $parry::query::{self, NonlinearRigidMotion, ShapeCastOptions};
            use $parry::shape::Shape;

            /// Options of the cast for pairs that move relative to each
            /// other: do they meet during the step (time of impact in
            /// `[0, 1]`, stopping at penetration)?
            pub fn cast_options() -> ShapeCastOptions {
                ShapeCastOptions { max_time_of_impact: 1.0, stop_at_penetration: true, ..Default::default() }
            }

            /// parry's copy of a world's frames, flat-numbered in the order
            /// they were added, with the structures of its broad phase.
            pub struct ParryWorld {
                /// Narrow phase on rayon's pool (with the `parallel` feature).
                pub parallel: bool,
                /// parry's shape of each frame, placed by its pose.
                pub shapes: Vec<Box<dyn Shape>>,
                /// Pose of each frame at the start of the current step.
                pub poses: Vec<Pose>,
                /// Body of each frame (flat body number).
                pub body: Vec<u32>,
                /// Displacement over the current step, per frame (zero when fixed).
                pub disp: Vec<Vector>,
                /// Flat numbers of the moving frames.
                pub moving: Vec<u32>,
                /// Flat numbers of the fixed frames.
                pub fixed: Vec<u32>,
                /// Swept box of every frame at the current step.
                pub aabbs: Vec<Aabb>,
                /// Boxes of the moving frames, in `moving` order.
                pub moving_aabbs: Vec<Aabb>,
                /// The fixed frames' tree, leaves in `fixed` order.
                pub static_tree: Option<Bvh>,
                /// The moving frames' tree (a program's own broad phase may
                /// keep another tree here).
                pub tree: Bvh,
                /// parry's scratch space for the tree traversals.
                pub workspace: BvhWorkspace,
                /// Candidate pairs `(smaller, larger)` handed to the narrow phase.
                pub candidates: Vec<(u32, u32)>,
                /// Intersecting pairs `(smaller, larger)` of the last step.
                pub hits: Vec<(u32, u32)>,
                /// ms of the last step in the broad phase (from the start
                /// given to [`ParryWorld::finish_step`]).
                pub broad_ms: f64,
                /// ms of the last step in the narrow phase (advancing included).
                pub narrow_ms: f64,
                /// Per frame, its turn over the step when its body turns:
                /// a motion from the identity about the body's reference
                /// point (in world coordinates), with the step's
                /// displacement and rotation.
                pub turn: Vec<Option<NonlinearRigidMotion>>,
            }

            impl ParryWorld {
                /// An empty world.
                pub fn new(parallel: bool) -> Self {
                    Self::with_capacity(parallel, 0)
                }

                /// An empty world, its per-frame lists reserved for `frames`.
                pub fn with_capacity(parallel: bool, frames: usize) -> Self {
                    ParryWorld {
                        parallel,
                        shapes: Vec::with_capacity(frames),
                        poses: Vec::with_capacity(frames),
                        body: Vec::with_capacity(frames),
                        disp: Vec::with_capacity(frames),
                        moving: Vec::new(),
                        fixed: Vec::new(),
                        aabbs: Vec::new(),
                        moving_aabbs: Vec::new(),
                        static_tree: None,
                        tree: Bvh::new(),
                        workspace: BvhWorkspace::default(),
                        candidates: Vec::new(),
                        hits: Vec::new(),
                        broad_ms: 0.0,
                        narrow_ms: 0.0,
                        turn: Vec::new(),
                    }
                }

                /// Adds a frame of body number `body`, displaced by `disp`
                /// each step; returns its flat number.
                pub fn add(&mut self, pose: Pose, shape: Box<dyn Shape>, body: u32, disp: Vector, moving: bool) -> u32 {
                    let k = self.shapes.len() as u32;
                    self.shapes.push(shape);
                    self.poses.push(pose);
                    self.body.push(body);
                    self.disp.push(disp);
                    if moving { self.moving.push(k) } else { self.fixed.push(k) }
                    self.turn.push(None);
                    k
                }

                /// Frame `f` also turns about `pivot` (world) by `motion`'s
                /// `angvel` each step: parry's nonlinear cast decides its pairs.
                pub fn set_turn(&mut self, f: u32, pivot: Vector, mut motion: NonlinearRigidMotion) {
                    motion.start = Pose::IDENTITY;
                    motion.local_center = pivot;
                    motion.linvel = self.disp[f as usize];
                    self.turn[f as usize] = Some(motion);
                }

                /// One swept box per frame added, none computed yet (call
                /// once, after the last [`ParryWorld::add`]).
                pub fn reset_boxes(&mut self) {
                    self.aabbs = vec![Aabb::new_invalid(); self.shapes.len()];
                }

                /// Frame `f`'s box swept by its displacement `disp[f]`.
                #[inline]
                pub fn sweep_frame(&mut self, f: usize) {
                    let d = self.disp[f];
                    if let Some(m) = &self.turn[f] {
                        // Every pose of the turn: the ball about the pivot
                        // that holds the shape, swept by the displacement.
                        let (pivot, s) = (m.local_center, self.shapes[f].compute_bounding_sphere(&self.poses[f]));
                        let r = (s.center - pivot).length() + s.radius;
                        let (lo, hi) = (pivot.min(pivot + d), pivot.max(pivot + d));
                        self.aabbs[f] = Aabb::new(lo - Vector::splat(r), hi + Vector::splat(r));
                        return;
                    }
                    let b = self.shapes[f].compute_aabb(&self.poses[f]);
                    self.aabbs[f] = Aabb::new(b.mins + d.min(Vector::ZERO), b.maxs + d.max(Vector::ZERO));
                }

                /// Swept boxes of the moving frames.
                pub fn sweep_moving(&mut self) {
                    for i in 0..self.moving.len() {
                        self.sweep_frame(self.moving[i] as usize);
                    }
                }

                /// Swept boxes of the fixed frames.
                pub fn sweep_fixed(&mut self) {
                    for i in 0..self.fixed.len() {
                        self.sweep_frame(self.fixed[i] as usize);
                    }
                }

                /// The fixed frames' tree (binned SAH) over their swept
                /// boxes, when there are fixed frames.
                pub fn build_static_tree(&mut self) {
                    if !self.fixed.is_empty() {
                        let boxes: Vec<Aabb> = self.fixed.iter().map(|&f| self.aabbs[f as usize]).collect();
                        self.static_tree = Some(Bvh::from_leaves(BvhBuildStrategy::Binned, &boxes));
                    }
                }

                /// The `rebuild` broad phase, after the moving frames' swept
                /// boxes: the moving frames' tree rebuilt (binned SAH), its
                /// pairs by `traverse_bvtt_single_tree::<false>`, the
                /// moving–fixed pairs by `leaf_pairs` against the fixed tree;
                /// never two frames of one body.
                pub fn broad_rebuild(&mut self) {
                    self.moving_aabbs.clear();
                    self.moving_aabbs.extend(self.moving.iter().map(|&f| self.aabbs[f as usize]));
                    self.tree = Bvh::from_leaves(BvhBuildStrategy::Binned, &self.moving_aabbs);
                    self.candidates.clear();
                    let (moving, body, cands) = (&self.moving, &self.body, &mut self.candidates);
                    self.tree.traverse_bvtt_single_tree::<false>(&mut self.workspace, &mut |a, b| {
                        let (fa, fb) = (moving[a as usize], moving[b as usize]);
                        if body[fa as usize] != body[fb as usize] {
                            cands.push((fa.min(fb), fa.max(fb)));
                        }
                    });
                    if let Some(st) = &self.static_tree {
                        for (a, b) in self.tree.leaf_pairs(st, |x, y| x.intersects(y)) {
                            let (fa, fb) = (self.moving[a as usize], self.fixed[b as usize]);
                            let (ba, bb) = (&self.aabbs[fa as usize], &self.aabbs[fb as usize]);
                            if ba.intersects(bb) && self.body[fa as usize] != self.body[fb as usize] {
                                self.candidates.push((fa.min(fb), fa.max(fb)));
                            }
                        }
                    }
                }

                /// Do frames `a` and `b` meet during the step?
                #[inline]
                pub fn test(&self, a: u32, b: u32) -> bool {
                    let (a, b) = (a as usize, b as usize);
                    let (da, db) = (self.disp[a], self.disp[b]);
                    let (pa, pb) = (&self.poses[a], &self.poses[b]);
                    let (sa, sb) = (&*self.shapes[a], &*self.shapes[b]);
                    if self.turn[a].is_some() || self.turn[b].is_some() {
                        let motion = |f: usize, pose: &Pose| match &self.turn[f] {
                            Some(m) => NonlinearRigidMotion {
                                start: *pose,
                                local_center: pose.inverse_transform_point(m.local_center),
                                ..*m
                            },
                            None => NonlinearRigidMotion { linvel: self.disp[f], ..NonlinearRigidMotion::constant_position(*pose) },
                        };
                        let (ma, mb) = (motion(a, pa), motion(b, pb));
                        return matches!(query::cast_shapes_nonlinear(&ma, sa, &mb, sb, 0.0, 1.0, true), Ok(Some(_)));
                    }
                    if da == db {
                        query::intersection_test(pa, sa, pb, sb).map(|r| r.intersecting).unwrap_or(false)
                    } else {
                        matches!(query::cast_shapes(pa, da, sa, pb, db, sb, cast_options()), Ok(Some(_)))
                    }
                }

                /// The candidates that meet, into `hits`.
                pub fn narrow(&mut self) {
                    let mut hits = std::mem::take(&mut self.hits);
                    hits.clear();
                    let this = &*self;
                    #[cfg(feature = "parallel")]
                    if this.parallel {
                        use rayon::prelude::*;
                        hits.par_extend(this.candidates.par_iter().copied().filter(|&(a, b)| this.test(a, b)));
                        self.hits = hits;
                        return;
                    }
                    let _ = this.parallel;
                    hits.extend(this.candidates.iter().copied().filter(|&(a, b)| this.test(a, b)));
                    self.hits = hits;
                }

                /// Every moving frame moved by its displacement.
                pub fn advance(&mut self) {
                    for &f in &self.moving {
                        let f = f as usize;
                        match &mut self.turn[f] {
                            Some(m) => {
                                self.poses[f] = m.position_at_time(1.0) * self.poses[f];
                                m.local_center += self.disp[f];
                            }
                            None => self.poses[f].translation += self.disp[f],
                        }
                    }
                }

                /// The end of a step whose broad phase started at `start` and
                /// has just ended: narrow phase and advance, each phase's ms
                /// in `broad_ms` and `narrow_ms`. Returns the number of
                /// intersecting pairs.
                pub fn finish_step(&mut self, start: Instant) -> usize {
                    let t1 = Instant::now();
                    self.narrow();
                    self.advance();
                    self.narrow_ms = t1.elapsed().as_secs_f64() * 1e3;
                    self.broad_ms = (t1 - start).as_secs_f64() * 1e3;
                    self.hits.len()
                }

                /// Bytes of the broad-phase structures: the trees' heap, the
                /// box lists and the candidate and hit lists (not the shapes,
                /// nor parry's internal workspace).
                pub fn memory(&self) -> usize {
                    let boxes = (self.aabbs.capacity() + self.moving_aabbs.capacity()) * size_of::<Aabb>();
                    let lists = (self.candidates.capacity() + self.hits.capacity()) * size_of::<(u32, u32)>();
                    self.tree.heap_memory_size()
                        + self.static_tree.as_ref().map_or(0, |t| t.heap_memory_size())
                        + boxes
                        + lists
                }
            }
        }
    };
}

parry_world!(
    /// The parry world over `parry3d_f64`.
    world3,
    parry3d_f64
);
parry_world!(
    /// The parry world over `parry2d_f64`.
    world2,
    parry2d_f64
);
