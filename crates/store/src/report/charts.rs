//! The report's charts, drawn by plotters into SVG strings that the page inlines: latency
//! percentile curves on log scales, horizontal bars, and per-second time series. Text in the
//! SVG is escaped by plotters' SVG backend; the page strips the `xmlns` attribute (inline SVG in
//! HTML needs none) so the file holds no URL at all.

use disktier_engine::Sample;
use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The page's palette (colour-blind friendly, Okabe–Ito), one colour per target or scenario.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(120, 120, 120),
    RGBColor(240, 228, 66),
];

pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// How the line of series `i` is drawn: past the palette's 8 colours the colours repeat with
/// another dash pattern and point marker, so that 9 or more targets or scenarios stay apart
/// (8 colours x 4 patterns; past 32 the styles repeat).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    /// A solid line, round points.
    Solid,
    /// Dashes, square points.
    Dashed,
    /// Dots, triangles.
    Dotted,
    /// Long dashes, crosses.
    Long,
}

pub fn dash(i: usize) -> Dash {
    match (i / PALETTE.len()) % 4 {
        0 => Dash::Solid,
        1 => Dash::Dashed,
        2 => Dash::Dotted,
        _ => Dash::Long,
    }
}

impl Dash {
    /// The CSS border style of the legend's swatch.
    pub fn css(self) -> &'static str {
        match self {
            Dash::Solid => "solid",
            Dash::Dashed | Dash::Long => "dashed",
            Dash::Dotted => "dotted",
        }
    }
    /// The marker's glyph in the HTML legend.
    pub fn glyph(self) -> &'static str {
        match self {
            Dash::Solid => "●",
            Dash::Dashed => "■",
            Dash::Dotted => "▲",
            Dash::Long => "✕",
        }
    }
    /// Dash length and gap in pixels (None: solid).
    fn pattern(self) -> Option<(u32, u32)> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some((8, 5)),
            Dash::Dotted => Some((2, 4)),
            Dash::Long => Some((16, 5)),
        }
    }
}

pub fn css_color(i: usize) -> String {
    let c = color(i);
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

const FONT: &str = "sans-serif";
const AXIS: RGBColor = RGBColor(90, 96, 110);
const GRID: RGBColor = RGBColor(228, 231, 236);

#[derive(Debug, thiserror::Error)]
#[error("cannot draw the {chart} chart: {msg}")]
pub struct ChartError {
    chart: &'static str,
    msg: String,
}

fn cerr<E: std::fmt::Display>(chart: &'static str) -> impl Fn(E) -> ChartError {
    move |e| ChartError {
        chart,
        msg: e.to_string(),
    }
}

/// Runs `draw` on an SVG canvas and returns the SVG, made fit for inlining.
fn svg(
    chart: &'static str,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), ChartError>,
) -> Result<String, ChartError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(cerr(chart))?;
        draw(&root)?;
        root.present().map_err(cerr(chart))?;
    }
    Ok(inline(&out))
}

/// Drops the namespace URL and fixed size so the SVG scales with the page.
fn inline(svg: &str) -> String {
    svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
        .replacen("<svg width=\"", "<svg role=\"img\" data-w=\"", 1)
        .replacen(" height=\"", " data-h=\"", 1)
}

/// The colour of a threshold line (the etcd limit).
const LIMIT: RGBColor = RGBColor(180, 35, 24);

/// A horizontal threshold on a percentile chart, e.g. etcd's 10 ms.
pub struct Limit {
    pub ns: u64,
    pub label: String,
}

/// One labelled line of a percentile chart: (percentile, latency ns) points.
pub struct Curve {
    pub label: String,
    pub color: usize,
    /// Its dash pattern and marker, [`dash`]`(style)`: `color` for a target's (or scenario's)
    /// line; another for a run's second direction (read and write of one randrw run), drawn in
    /// the same colour.
    pub style: usize,
    pub points: Vec<(f64, u64)>,
}

/// Percentile as "number of nines": p50 → 0.3, p90 → 1, p99 → 2, p99.9 → 3, p99.99 → 4.
fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

fn nines_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 10f64.powf(-x));
    disktier_engine::percentile_key((p * 100.0).round() / 100.0)
}

/// Latency against percentile, both on log scales, p50 to p99.99, one line per curve (the
/// page draws the legend in HTML, beside the target cards' colours).
pub fn percentiles(
    curves: &[Curve],
    y_label: &str,
    width: u32,
    limit: Option<Limit>,
) -> Result<String, ChartError> {
    let pts: Vec<u64> = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.1))
        .chain(limit.as_ref().map(|l| l.ns))
        .filter(|v| *v > 0)
        .collect();
    let (lo, hi) = decades(
        pts.iter().copied().min().unwrap_or(1000) as f64,
        pts.iter().copied().max().unwrap_or(1_000_000) as f64,
    );
    svg("percentile", (width, 340), |root| {
        let e = cerr("percentile");
        let mut chart = ChartBuilder::on(root)
            .margin(14)
            .x_label_area_size(38)
            .y_label_area_size(72)
            .build_cartesian_2d(nines(50.0)..nines(99.99) + 0.05, (lo..hi).log_scale())
            .map_err(&e)?;
        house_style(
            chart
                .configure_mesh()
                .x_labels(5)
                .x_label_formatter(&|x| format!("p{}", nines_label(*x)))
                .y_label_formatter(&|y| disktier_units::fmt_ns(*y))
                .y_desc(y_label)
                .x_desc("percentile"),
            13,
        )
        .map_err(&e)?;
        if let Some(l) = &limit {
            let x0 = nines(50.0);
            let x1 = nines(99.99) + 0.05;
            let y = (l.ns as f64).clamp(lo, hi);
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x0, y), (x1, y)],
                    6,
                    4,
                    LIMIT.stroke_width(2),
                ))
                .map_err(&e)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    l.label.clone(),
                    (x1 - 0.04, y),
                    (FONT, 12)
                        .into_font()
                        .color(&LIMIT)
                        .pos(Pos::new(HPos::Right, VPos::Bottom)),
                )))
                .map_err(&e)?;
        }
        for c in curves {
            let col = color(c.color);
            let style = dash(c.style);
            let data: Vec<(f64, f64)> = c
                .points
                .iter()
                .filter(|(p, v)| *p >= 50.0 && *v > 0)
                .map(|(p, v)| (nines(p.min(99.99)), (*v as f64).clamp(lo, hi)))
                .collect();
            match style.pattern() {
                None => chart
                    .draw_series(LineSeries::new(data.clone(), col.stroke_width(3)))
                    .map(|_| ()),
                Some((size, gap)) => chart
                    .draw_series(DashedLineSeries::new(
                        data.clone(),
                        size,
                        gap,
                        col.stroke_width(3),
                    ))
                    .map(|_| ()),
            }
            .map_err(&e)?;
            let points = data.iter().copied();
            match style {
                Dash::Solid => chart
                    .draw_series(points.map(|p| Circle::new(p, 3, col.filled())))
                    .map(|_| ()),
                Dash::Dashed => chart
                    .draw_series(points.map(|p| {
                        EmptyElement::at(p) + Rectangle::new([(-3, -3), (3, 3)], col.filled())
                    }))
                    .map(|_| ()),
                Dash::Dotted => chart
                    .draw_series(points.map(|p| TriangleMarker::new(p, 4, col.filled())))
                    .map(|_| ()),
                Dash::Long => chart
                    .draw_series(points.map(|p| Cross::new(p, 4, col.stroke_width(2))))
                    .map(|_| ()),
            }
            .map_err(&e)?;
        }
        Ok(())
    })
}

/// One horizontal bar.
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub color: usize,
    /// Text printed at the end of the bar.
    pub text: String,
}

/// Horizontal bars, one per item, labelled on the left.
/// The longest bar label drawn whole: a target, profile, direction, run id and the interrupted
/// mark fit; a longer one keeps its end.
pub const BAR_LABEL_CHARS: usize = 80;

pub fn bars(items: &[Bar], x_label: &str, width: u32) -> Result<String, ChartError> {
    let n = items.len().max(1);
    let max = axis(items.iter().map(|b| b.value).fold(0.0, f64::max)).max(1e-9);
    let label_chars = items
        .iter()
        .map(|b| short(&b.label, BAR_LABEL_CHARS).chars().count())
        .max()
        .unwrap_or(8)
        .clamp(8, BAR_LABEL_CHARS);
    let height = 60 + 34 * n as u32;
    // plotters' segmented range `0..k` has k+1 slots; the first item goes on top.
    let top = n.saturating_sub(1).max(1);
    let slot = move |i: usize| if n == 1 { 0 } else { n - 1 - i };
    svg("bars", (width, height), |root| {
        let e = cerr("bars");
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(12 + 7 * label_chars as u32)
            .build_cartesian_2d(0.0..max * 1.3, (0..top).into_segmented())
            .map_err(&e)?;
        house_style(
            chart
                .configure_mesh()
                .disable_y_mesh()
                .x_labels(6)
                .x_desc(x_label)
                .x_label_formatter(&|v| crate::compare::fmt_count(*v))
                .y_labels(n + 1)
                .y_label_formatter(&|s| match s {
                    SegmentValue::CenterOf(i) if *i < n => items
                        .get(slot(*i))
                        .map(|b| short(&b.label, BAR_LABEL_CHARS))
                        .unwrap_or_default(),
                    _ => String::new(),
                }),
            13,
        )
        .map_err(&e)?;
        chart
            .draw_series(items.iter().enumerate().map(|(i, b)| {
                let mut r = Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(slot(i))),
                        (
                            b.value.clamp(0.0, max * 1.3),
                            SegmentValue::Exact(slot(i) + 1),
                        ),
                    ],
                    color(b.color).filled(),
                );
                r.set_margin(6, 6, 0, 0);
                r
            }))
            .map_err(&e)?;
        chart
            .draw_series(items.iter().enumerate().map(|(i, b)| {
                Text::new(
                    b.text.clone(),
                    (
                        b.value.clamp(0.0, max * 1.3) + max * 0.01,
                        SegmentValue::CenterOf(slot(i)),
                    ),
                    (FONT, 13)
                        .into_font()
                        .color(&AXIS)
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                )
            }))
            .map_err(&e)?;
        Ok(())
    })
}

/// A series line: name, colour, and the figure it reads from a sample.
type IopsLine = (&'static str, usize, fn(&Sample) -> f64);
type LatLine = (&'static str, usize, fn(&Sample) -> Option<u64>);

/// The per-second series of one run: IOPS above, p99 latency (log scale) below.
pub fn series(samples: &[Sample], bandwidth: bool) -> Result<String, ChartError> {
    let t_max = axis(samples.iter().map(|s| s.t_s).fold(1.0, f64::max)).max(1.0);
    const MIB: f64 = 1048576.0;
    let lines: [IopsLine; 2] = if bandwidth {
        [
            ("read MiB/s", 0, |s| s.read_bw_bytes / MIB),
            ("write MiB/s", 1, |s| s.write_bw_bytes / MIB),
        ]
    } else {
        [
            ("read IOPS", 0, |s| s.read_iops),
            ("write IOPS", 1, |s| s.write_iops),
        ]
    };
    let iops_max = samples
        .iter()
        .map(|s| (lines[0].2)(s).max((lines[1].2)(s)))
        .fold(1.0, f64::max);
    let iops_max = axis(iops_max).max(1.0);
    let lats: Vec<f64> = samples
        .iter()
        .flat_map(|s| [s.p99_ns, s.sync_p99_ns])
        .flatten()
        .filter(|v| *v > 0)
        .map(|v| v as f64)
        .collect();
    svg("series", (560, 300), |root| {
        let e = cerr("series");
        let (top, bottom) = root.split_vertically(150);
        let mut chart = ChartBuilder::on(&top)
            .margin(10)
            .x_label_area_size(18)
            .y_label_area_size(72)
            .build_cartesian_2d(0.0..t_max, 0.0..iops_max * 1.15)
            .map_err(&e)?;
        let y_desc = if bandwidth { "MiB/s" } else { "IOPS" };
        mesh(
            &mut chart,
            y_desc,
            &|v| crate::compare::fmt_count(*v),
            t_max,
            &e,
        )?;
        for (name, c, f) in lines {
            if samples.iter().any(|s| f(s) > 0.0) {
                let points = samples
                    .iter()
                    .map(|s| (s.t_s.clamp(0.0, t_max), f(s).clamp(0.0, iops_max * 1.15)));
                labelled_line(&mut chart, name, c, points, &e)?;
            }
        }
        legend_box(&mut chart, &e)?;
        if lats.is_empty() {
            return Ok(());
        }
        let (lo, hi) = decades(
            lats.iter().copied().fold(f64::MAX, f64::min),
            lats.iter().copied().fold(0.0, f64::max),
        );
        let mut chart = ChartBuilder::on(&bottom)
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(72)
            .build_cartesian_2d(0.0..t_max, (lo..hi).log_scale())
            .map_err(&e)?;
        house_style(
            chart
                .configure_mesh()
                .x_desc("seconds")
                .y_desc("p99 latency")
                .x_label_formatter(&|v| seconds(*v, t_max))
                .y_label_formatter(&|v| disktier_units::fmt_ns(*v))
                .y_labels(4),
            12,
        )
        .map_err(&e)?;
        let lines: [LatLine; 2] = [
            ("I/O p99", 2, |s| s.p99_ns),
            ("sync p99", 3, |s| s.sync_p99_ns),
        ];
        for (name, c, f) in lines {
            let pts: Vec<(f64, f64)> = samples
                .iter()
                .filter_map(|s| {
                    f(s).filter(|v| *v > 0)
                        .map(|v| (s.t_s.clamp(0.0, t_max), (v as f64).clamp(lo, hi)))
                })
                .collect();
            if !pts.is_empty() {
                labelled_line(&mut chart, name, c, pts, &e)?;
            }
        }
        legend_box(&mut chart, &e)
    })
}

/// Draws `points` as a line in palette colour `c`, named `name` in the legend. A single point
/// (a run of one second has one per-second sample) is no line at all, so it is drawn as a dot
/// (QA: a 1 s run's "Second by second" chart was empty).
fn labelled_line<'a, DB: DrawingBackend + 'a, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<'a, DB, CT>,
    name: &str,
    c: usize,
    points: impl IntoIterator<Item = (f64, f64)>,
    e: &impl Fn(DrawingAreaErrorKind<DB::ErrorType>) -> ChartError,
) -> Result<(), ChartError> {
    let col = color(c);
    let points: Vec<(f64, f64)> = points.into_iter().collect();
    if let [p] = points[..] {
        chart
            .draw_series(std::iter::once(Circle::new(p, 3, col.filled())))
            .map_err(e)?;
    }
    chart
        .draw_series(LineSeries::new(points, col.stroke_width(2)))
        .map_err(e)?
        .label(name)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], col.stroke_width(2)));
    Ok(())
}

/// The legend of the lines drawn so far, in the upper left corner.
fn legend_box<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    e: &impl Fn(DrawingAreaErrorKind<DB::ErrorType>) -> ChartError,
) -> Result<(), ChartError> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(GRID)
        .label_font((FONT, 12))
        .draw()
        .map_err(e)
}

fn mesh<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    y_desc: &str,
    fmt: &dyn Fn(&f64) -> String,
    t_max: f64,
    e: &impl Fn(DrawingAreaErrorKind<DB::ErrorType>) -> ChartError,
) -> Result<(), ChartError> {
    house_style(
        chart
            .configure_mesh()
            .y_desc(y_desc)
            .y_labels(4)
            .x_label_formatter(&|v| seconds(*v, t_max))
            .y_label_formatter(fmt),
        12,
    )
    .map_err(e)
}

/// The report's look for axes and grid lines, with labels in `font` px, then draws them.
fn house_style<X, Y, XT, YT, DB>(
    mesh: &mut MeshStyle<'_, '_, X, Y, DB>,
    font: u32,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    X: Ranged<ValueType = XT> + ValueFormatter<XT>,
    Y: Ranged<ValueType = YT> + ValueFormatter<YT>,
    DB: DrawingBackend,
{
    mesh.light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .axis_style(AXIS)
        .label_style((FONT, font).into_font().color(&AXIS))
        .axis_desc_style((FONT, font).into_font().color(&AXIS))
        .draw()
}

/// The largest value an axis reaches (1e15: a million seconds of nanoseconds, or a petabyte per
/// second, beyond any real measurement). A stored document can hold anything; plotters' tick
/// arithmetic overflows on ranges near f64's limits (found by `fuzz_report`), so every axis end
/// goes through [`axis`].
const AXIS_MAX: f64 = 1e15;

/// `v` made safe for an axis end: finite, in `0..=AXIS_MAX`.
fn axis(v: f64) -> f64 {
    if v.is_finite() {
        v.clamp(0.0, AXIS_MAX)
    } else {
        0.0
    }
}

/// A log axis from the decade below `lo` to the decade above `hi`, so it always carries at least
/// two labelled ticks.
fn decades(lo: f64, hi: f64) -> (f64, f64) {
    let (lo, hi) = (axis(lo), axis(hi));
    let lo = 10f64.powf(lo.max(1.0).log10().floor());
    let mut hi = 10f64.powf(hi.max(1.0).log10().ceil());
    if hi <= lo {
        hi = lo * 10.0;
    }
    (lo, hi)
}

/// A time axis label: whole seconds, or tenths on a run of a few seconds.
fn seconds(v: f64, t_max: f64) -> String {
    if t_max >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Keeps the end of a long label (the end of a path is the part that tells targets apart), with
/// its control and bidi characters escaped ([`disktier_units::printable`]): plotters writes a
/// chart's text into the SVG as it is, and a U+202E there reorders the label on the page.
pub fn short(s: &str, max: usize) -> String {
    let s = disktier_units::printable(s);
    let n = s.chars().count();
    if n <= max {
        s
    } else {
        let tail: String = s.chars().skip(n - (max - 1)).collect();
        format!("…{tail}")
    }
}
