//! The charts of `report --format svg` drawn by a renderer that is not a browser
//! (resvg, which like librsvg has no CSS custom properties): every chart of the bundled
//! ladders comes out as a picture, not a black or empty rectangle, and its marks (bars,
//! stacked segments, points) have the colours the file gives them; the roofline's
//! points stand where the roofline model puts them.

mod common;

fn chart(ladder: &str, chart: &str) -> String {
    common::stdout_on_bundled(&[
        "report", "--ladder", ladder, "--format", "svg", "--chart", chart,
    ])
}

fn render(svg: &str) -> resvg::tiny_skia::Pixmap {
    let tree = resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default()).unwrap();
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    Some(&tag[at..at + tag[at..].find('"')?])
}

fn num(tag: &str, name: &str) -> Option<f64> {
    attr(tag, name)?.parse().ok()
}

fn hex(c: &str) -> [u8; 3] {
    let c = c.trim_start_matches('#');
    let byte = |i: usize| u8::from_str_radix(&c[i..i + 2], 16).unwrap();
    [byte(0), byte(2), byte(4)]
}

/// The marks of a chart with a known colour and room for a pixel inside: points inside
/// (a bar's at a quarter, half and three quarters of its height, as a reference line may
/// cross one of them) and the colour. A bar's colour is its class's (`.bar`,
/// `.bar.best`), a segment's or a point's its `style`.
fn marks(svg: &str) -> Vec<(Vec<(f64, f64)>, String)> {
    let mut out = Vec::new();
    for piece in svg.split('<').skip(1) {
        let tag = &piece[..piece.find('>').unwrap_or(piece.len())];
        let fill = match attr(tag, "style").and_then(|s| s.strip_prefix("fill:")) {
            Some(f) => f.to_string(),
            None => match attr(tag, "class") {
                Some("mark bar best") => "#1a7f37".to_string(),
                Some("mark bar") => "#0969da".to_string(),
                _ => continue,
            },
        };
        let centre = if tag.starts_with("rect ") {
            let (x, y, w, h) = (
                num(tag, "x"),
                num(tag, "y"),
                num(tag, "width"),
                num(tag, "height"),
            );
            match (x, y, w, h) {
                (Some(x), Some(y), Some(w), Some(h)) if w >= 6.0 && h >= 6.0 => [0.25, 0.5, 0.75]
                    .iter()
                    .map(|f| (x + w / 2.0, y + h * f))
                    .collect(),
                _ => continue,
            }
        } else if tag.starts_with("circle ") {
            match (num(tag, "cx"), num(tag, "cy"), num(tag, "r")) {
                (Some(x), Some(y), Some(r)) if r >= 3.0 => vec![(x, y)],
                _ => continue,
            }
        } else {
            continue;
        };
        out.push((centre, fill));
    }
    // A point that a later one (another series at the same height, a baseline's diamond
    // on the roofline) covers shows the later one's colour: only the uncovered are
    // checked.
    let mut seen = Vec::new();
    for (points, fill) in out.into_iter().rev() {
        let covered = points.len() == 1
            && seen.iter().any(|(later, _): &(Vec<(f64, f64)>, String)| {
                later
                    .iter()
                    .any(|l| (l.0 - points[0].0).hypot(l.1 - points[0].1) < 8.0)
            });
        if !covered {
            seen.push((points, fill));
        }
    }
    seen
}

#[test]
fn every_chart_of_the_bundled_ladders_renders_with_its_colours() {
    let mut drawn = 0;
    for ladder in ["flash-attention", "gemm"] {
        for name in ["speed", "stalls", "signals", "roofline"] {
            let svg = chart(ladder, name);
            let at = format!("{ladder} {name}");
            assert!(
                !svg.contains("var("),
                "{at}: a colour left to a CSS custom property"
            );
            if svg.contains("no data for the") {
                continue;
            }
            drawn += 1;
            let pixmap = render(&svg);
            let px = |x: f64, y: f64| {
                let p = pixmap.pixel(x as u32, y as u32).unwrap();
                [p.red(), p.green(), p.blue(), p.alpha()]
            };
            // The background is the light scheme's white, opaque: not black, not empty.
            assert_eq!(px(1.0, 1.0), [255, 255, 255, 255], "{at}: background");
            let marks = marks(&svg);
            assert!(marks.len() >= 3, "{at}: {} marks", marks.len());
            for (points, fill) in &marks {
                let want = hex(fill);
                // Each point and its neighbours within 1.5 px: a line of another series
                // may cross a point's centre.
                let seen: Vec<[u8; 4]> = points
                    .iter()
                    .flat_map(|&(x, y)| {
                        [-1.5, 0.0, 1.5]
                            .into_iter()
                            .flat_map(move |dx| [-1.5, 0.0, 1.5].map(|dy| (x + dx, y + dy)))
                    })
                    .map(|(x, y)| px(x, y))
                    .collect();
                let coloured = seen.iter().any(|&[r, g, b, a]| {
                    a == 255
                        && [r, g, b]
                            .iter()
                            .zip(want)
                            .all(|(&got, want)| got.abs_diff(want) <= 2)
                });
                assert!(
                    coloured,
                    "{at}: the mark at {points:?} is {seen:?}, not {fill}"
                );
            }
        }
    }
    assert_eq!(drawn, 8, "every chart of both ladders has data");
}

/// An axis's decades: (value, pixel) each.
type Ticks = Vec<(f64, f64)>;

/// The roofline's decade grid lines per axis, from their `data-x` and `data-y`.
fn decades(svg: &str) -> (Ticks, Ticks) {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for piece in svg.split("<line ").skip(1) {
        let tag = &piece[..piece.find('>').unwrap_or(piece.len())];
        let tag = format!(" {tag}");
        if let (Some(v), Some(x)) = (num(&tag, "data-x"), num(&tag, "x1")) {
            xs.push((v, x));
        }
        if let (Some(v), Some(y)) = (num(&tag, "data-y"), num(&tag, "y1")) {
            ys.push((v, y));
        }
    }
    (xs, ys)
}

/// The pixel of `v` on a log axis through its first and last decades.
fn on_axis(ticks: &[(f64, f64)], v: f64) -> f64 {
    let (first, last) = (ticks[0], ticks[ticks.len() - 1]);
    let f = (v.log10() - first.0.log10()) / (last.0.log10() - first.0.log10());
    first.1 + f * (last.1 - first.1)
}

/// Every version with a point in `report --roofline --format json` has its mark in the
/// SVG (a circle, a baseline's diamond: a square turned about its centre) at its DRAM
/// intensity and FLOP/s on the chart's decades, within half a pixel; the versions without
/// one have none.
#[test]
fn the_roofline_points_stand_where_the_model_puts_them() {
    for ladder in ["flash-attention", "gemm"] {
        let svg = chart(ladder, "roofline");
        let json = common::json_on_bundled(&[
            "report",
            "--ladder",
            ladder,
            "--roofline",
            "--format",
            "json",
        ]);
        let (xs, ys) = decades(&svg);
        assert!(
            xs.len() >= 2 && ys.len() >= 2,
            "{ladder}: decades {xs:?} {ys:?}"
        );
        let mut checked = 0;
        for v in json[0]["versions"].as_array().unwrap() {
            let id = v["id"].as_str().unwrap();
            let key = format!("data-version=\"{id}\"");
            let tag = svg
                .split('<')
                .find(|t| t.contains(&key) && t.contains("class=\"mark"));
            let point = &v["point"];
            let intensity = point["levels"][0]["intensity"].as_f64();
            let (Some(tag), Some(ai)) = (tag, intensity) else {
                assert!(
                    tag.is_none() && intensity.is_none(),
                    "{ladder} {id}: {tag:?}"
                );
                continue;
            };
            let flops = point["flop_per_s"].as_f64().unwrap();
            let tag = &tag[..tag.find('>').unwrap()];
            let centre = match (num(tag, "cx"), num(tag, "cy")) {
                (Some(x), Some(y)) => (x, y),
                _ => (
                    num(tag, "x").unwrap() + num(tag, "width").unwrap() / 2.0,
                    num(tag, "y").unwrap() + num(tag, "height").unwrap() / 2.0,
                ),
            };
            let want = (on_axis(&xs, ai), on_axis(&ys, flops));
            assert!(
                (centre.0 - want.0).abs() < 0.5 && (centre.1 - want.1).abs() < 0.5,
                "{ladder} {id}: drawn at {centre:?}, the model puts it at {want:?}"
            );
            checked += 1;
        }
        assert!(checked >= 10, "{ladder}: {checked} points");
    }
}
