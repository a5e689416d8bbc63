//! PNG figures: a heat map of speedups over `classic` (Vondra 2024's PDFs:
//! rows are variants, columns client counts, green faster, red slower, the
//! ratio printed in each cell) and a throughput-vs-clients line chart.
//!
//! Text is drawn by plotters' pure-Rust `ab_glyph` path with DejaVu Sans
//! compiled into the binary (`assets/DejaVuSans.ttf`, licence beside it),
//! so writing a PNG needs no fontconfig, freetype or installed font.

use crate::cli::CliError;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::Once;

/// The font every figure uses (Bitstream Vera licence, see
/// `assets/DejaVuSans-LICENSE.txt`).
const FONT_TTF: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
/// The family name the font is registered under.
const FAMILY: &str = "sans-serif";
/// Ratios at or beyond `SATURATE`× (or 1/`SATURATE`×) get the full colour.
const SATURATE: f64 = 4.0;
/// Pixel size of one heat-map cell.
const CELL_W: i32 = 96;
const CELL_H: i32 = 34;

/// A grid of speedups: `cells[row][col]` is `scalable / classic` (or any
/// profile over the baseline), `None` where a point is missing.
#[derive(Clone, Debug)]
pub struct HeatMap {
    /// Figure title.
    pub title: String,
    /// Row labels (variants).
    pub rows: Vec<String>,
    /// Column labels (client counts).
    pub cols: Vec<String>,
    /// Ratios, one row per label.
    pub cells: Vec<Vec<Option<f64>>>,
}

/// Lines of one measure over categorical x values (client counts).
#[derive(Clone, Debug)]
pub struct LineChart {
    /// Figure title.
    pub title: String,
    /// X-axis caption.
    pub x_desc: String,
    /// Y-axis caption.
    pub y_desc: String,
    /// X labels, equally spaced.
    pub x_labels: Vec<String>,
    /// The lines.
    pub series: Vec<Series>,
}

/// One line of a [`LineChart`].
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Colour group: series of one variant share a colour.
    pub group: usize,
    /// The baseline profile is drawn thin with crosses, others thick with dots.
    pub baseline: bool,
    /// One value per x label.
    pub values: Vec<Option<f64>>,
}

fn register_font() -> Result<(), CliError> {
    static ONCE: Once = Once::new();
    let mut failed = false;
    ONCE.call_once(|| {
        for style in [FontStyle::Normal, FontStyle::Bold] {
            failed |= plotters::style::register_font(FAMILY, style, FONT_TTF).is_err();
        }
    });
    if failed {
        return Err("the bundled font could not be loaded".into());
    }
    Ok(())
}

fn plot_err<E: std::fmt::Debug>(e: E) -> CliError {
    format!("plot: {e:?}").into()
}

/// The cell colour of `ratio`: white at 1.0, towards green above, red below,
/// on a log scale saturating at [`SATURATE`].
pub fn ratio_color(ratio: f64) -> RGBColor {
    let t = (ratio.max(1e-9).log2() / SATURATE.log2()).clamp(-1.0, 1.0);
    let (target, t) = if t >= 0.0 { ((26u8, 152u8, 80u8), t) } else { ((215u8, 48u8, 39u8), -t) };
    let mix = |to: u8| (255.0 + (f64::from(to) - 255.0) * t).round() as u8;
    RGBColor(mix(target.0), mix(target.1), mix(target.2))
}

/// Writes `map` as a PNG to `path`.
pub fn heat_map(path: &Path, map: &HeatMap) -> Result<(), CliError> {
    heat_map_noted(path, map, "speedup over classic (tps ratio): green faster, red slower")
}

/// Writes `map` as a PNG to `path`, `note` under the title saying what the ratio is.
pub fn heat_map_noted(path: &Path, map: &HeatMap, note: &str) -> Result<(), CliError> {
    register_font()?;
    if map.rows.is_empty() || map.cols.is_empty() {
        return Err("plot: a heat map needs at least one row and one column".into());
    }
    let label_font = (FAMILY, 15).into_font();
    let label_w = map.rows.iter().map(|r| (r.chars().count() as i32) * 9).max().unwrap_or(0) + 24;
    let ncols = map.cols.len() as i32;
    let nrows = map.rows.len() as i32;
    let top = 76;
    let width = (label_w + ncols * CELL_W + 24).max(520);
    let height = top + nrows * CELL_H + 56;
    let root = BitMapBackend::new(path, (width as u32, height as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let title = TextStyle::from((FAMILY, 18).into_font().style(FontStyle::Bold)).pos(Pos::new(HPos::Left, VPos::Top));
    root.draw_text(&map.title, &title, (12, 10)).map_err(plot_err)?;
    let sub = TextStyle::from((FAMILY, 13).into_font()).color(&RGBColor(90, 90, 90));
    root.draw_text(note, &sub, (12, 34)).map_err(plot_err)?;
    let centre = TextStyle::from(label_font.clone()).pos(Pos::new(HPos::Center, VPos::Center));
    let left = TextStyle::from(label_font).pos(Pos::new(HPos::Left, VPos::Center));
    for (c, name) in map.cols.iter().enumerate() {
        let x = label_w + c as i32 * CELL_W + CELL_W / 2;
        root.draw_text(name, &centre, (x, top - 12)).map_err(plot_err)?;
    }
    for (r, name) in map.rows.iter().enumerate() {
        let y0 = top + r as i32 * CELL_H;
        root.draw_text(name, &left, (12, y0 + CELL_H / 2)).map_err(plot_err)?;
        for c in 0..map.cols.len() {
            let x0 = label_w + c as i32 * CELL_W;
            let cell = map.cells.get(r).and_then(|row| row.get(c)).copied().flatten();
            let fill = cell.map_or(RGBColor(235, 235, 235), ratio_color);
            root.draw(&Rectangle::new([(x0, y0), (x0 + CELL_W, y0 + CELL_H)], fill.filled())).map_err(plot_err)?;
            root.draw(&Rectangle::new([(x0, y0), (x0 + CELL_W, y0 + CELL_H)], WHITE.stroke_width(2)))
                .map_err(plot_err)?;
            let text = cell.map_or_else(|| "–".to_owned(), |v| format!("{v:.2}×"));
            root.draw_text(&text, &centre, (x0 + CELL_W / 2, y0 + CELL_H / 2)).map_err(plot_err)?;
        }
    }
    let foot = TextStyle::from((FAMILY, 12).into_font()).color(&RGBColor(90, 90, 90));
    let note = format!("colour saturates at {SATURATE:.0}× and 1/{SATURATE:.0}×; grey: not measured");
    root.draw_text(&note, &foot, (12, top + nrows * CELL_H + 18)).map_err(plot_err)?;
    root.present().map_err(plot_err)?;
    Ok(())
}

/// Writes `chart` as a PNG to `path`: a linear y axis from 0, or a log
/// axis when the values span more than [`LOG_AXIS_SPAN`]×.
pub fn line_chart(path: &Path, chart: &LineChart) -> Result<(), CliError> {
    register_font()?;
    let values: Vec<f64> =
        chart.series.iter().flat_map(|s| s.values.iter().flatten().copied()).filter(|v| *v > 0.0).collect();
    if values.is_empty() || chart.x_labels.is_empty() {
        return Err("plot: a line chart needs at least one positive value".into());
    }
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(0.0f64, f64::max);
    if hi / lo > LOG_AXIS_SPAN {
        draw_lines(path, chart, (lo / 1.5..hi * 1.5).log_scale(), true)
    } else {
        draw_lines(path, chart, 0.0..hi * 1.1, false)
    }
}

/// Line colours (matplotlib's "tab10"), dark enough on white.
const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (214, 39, 40),
    (44, 160, 44),
    (148, 103, 189),
    (255, 127, 14),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

/// Values spanning more than this ratio get a log-scale y axis.
pub const LOG_AXIS_SPAN: f64 = 20.0;

fn draw_lines<Y>(path: &Path, chart: &LineChart, y: Y, log: bool) -> Result<(), CliError>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let legend_w = chart.series.iter().map(|s| s.name.chars().count() as u32 * 8).max().unwrap_or(0) + 60;
    let root = BitMapBackend::new(path, (900 + legend_w, 620)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let (plot_area, legend) = root.split_horizontally(900);
    let n = chart.x_labels.len();
    let labels = chart.x_labels.clone();
    let mut ctx = ChartBuilder::on(&plot_area)
        .caption(&chart.title, (FAMILY, 18).into_font().style(FontStyle::Bold))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(84)
        .build_cartesian_2d(-0.3f64..(n as f64 - 0.7), y)
        .map_err(plot_err)?;
    let y_desc = if log { format!("{} (log scale)", chart.y_desc) } else { chart.y_desc.clone() };
    ctx.configure_mesh()
        .x_desc(chart.x_desc.as_str())
        .y_desc(y_desc)
        .x_labels(n)
        .x_label_formatter(&|x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_labels(if log { 6 } else { 10 })
        .y_label_formatter(&|y: &f64| format!("{y:.0}"))
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 15))
        .light_line_style(RGBColor(240, 240, 240))
        .draw()
        .map_err(plot_err)?;
    let key = TextStyle::from((FAMILY, 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, s) in chart.series.iter().enumerate() {
        let (r, g, b) = PALETTE[s.group % PALETTE.len()];
        let colour = RGBColor(r, g, b).to_rgba();
        let style = if s.baseline { colour.stroke_width(1) } else { colour.stroke_width(3) };
        let points: Vec<(f64, f64)> =
            s.values.iter().enumerate().filter_map(|(x, y)| y.filter(|v| *v > 0.0).map(|v| (x as f64, v))).collect();
        ctx.draw_series(LineSeries::new(points.clone(), style)).map_err(plot_err)?;
        let y = 60 + i as i32 * 20;
        legend.draw(&PathElement::new(vec![(8, y), (36, y)], style)).map_err(plot_err)?;
        legend.draw_text(&s.name, &key, (44, y)).map_err(plot_err)?;
        if s.baseline {
            ctx.draw_series(points.iter().map(|&p| Cross::new(p, 4, colour.stroke_width(1)))).map_err(plot_err)?;
        } else {
            ctx.draw_series(points.iter().map(|&p| Circle::new(p, 4, colour.filled()))).map_err(plot_err)?;
        }
    }
    root.present().map_err(plot_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_colours_run_from_red_through_white_to_green() {
        assert_eq!(ratio_color(1.0), RGBColor(255, 255, 255));
        let faster = ratio_color(SATURATE * 2.0);
        assert_eq!(faster, RGBColor(26, 152, 80));
        let slower = ratio_color(0.5);
        assert!(slower.0 > slower.1 && slower.0 > slower.2, "{slower:?} is not reddish");
        let mild = ratio_color(1.5);
        assert!(mild.1 > mild.0 && mild.0 > 26, "{mild:?} is not a light green");
    }

    #[test]
    fn figures_are_written_with_the_bundled_font() {
        let dir = tempfile::tempdir().unwrap();
        let map = HeatMap {
            title: "test".into(),
            rows: vec!["a=1".into(), "a=2".into()],
            cols: vec!["1".into(), "8".into()],
            cells: vec![vec![Some(1.0), Some(3.0)], vec![Some(0.5), None]],
        };
        let hm = dir.path().join("h.png");
        heat_map(&hm, &map).unwrap();
        let chart = LineChart {
            title: "t".into(),
            x_desc: "clients".into(),
            y_desc: "tps".into(),
            x_labels: vec!["1".into(), "8".into()],
            series: vec![
                Series { name: "classic".into(), group: 0, baseline: true, values: vec![Some(10.0), Some(20.0)] },
                Series { name: "scalable".into(), group: 0, baseline: false, values: vec![Some(12.0), None] },
            ],
        };
        let lc = dir.path().join("l.png");
        line_chart(&lc, &chart).unwrap();
        for p in [hm, lc] {
            let bytes = std::fs::read(&p).unwrap();
            assert!(bytes.len() > 1000, "{} is {} bytes", p.display(), bytes.len());
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        }
    }
}
