//! Markdown to HTML for a version's notes: CommonMark (with tables and strikethrough)
//! through pulldown-cmark, made safe to put into a page that loads nothing: raw HTML shows
//! as text, an image becomes a link to it, a link keeps only a web, mail, in-page or
//! relative destination, and headings move down to sit under the page's own.

use pulldown_cmark::{
    CodeBlockKind, CowStr, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd,
};

/// The notes as HTML; a note's `#` heading becomes `<h{1 + offset}>` (at most `<h6>`).
pub fn to_html(markdown: &str, heading_offset: usize) -> String {
    // Control characters of the notes shown escaped, as in the terminal.
    let markdown = crate::report::format::printable_lines(markdown);
    let markdown = markdown.as_ref();
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let events = Parser::new_ext(markdown, options).map(|e| safe_event(e, heading_offset));
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

fn safe_event(e: Event<'_>, heading_offset: usize) -> Event<'_> {
    match e {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Start(Tag::HtmlBlock) => Event::Start(Tag::CodeBlock(CodeBlockKind::Indented)),
        Event::End(TagEnd::HtmlBlock) => Event::End(TagEnd::CodeBlock),
        Event::Start(Tag::Heading { level, .. }) => Event::Start(Tag::Heading {
            level: shifted(level, heading_offset),
            id: None,
            classes: Vec::new(),
            attrs: Vec::new(),
        }),
        Event::End(TagEnd::Heading(level)) => {
            Event::End(TagEnd::Heading(shifted(level, heading_offset)))
        }
        Event::Start(Tag::Image {
            dest_url, title, ..
        })
        | Event::Start(Tag::Link {
            dest_url, title, ..
        }) => Event::Start(Tag::Link {
            link_type: LinkType::Inline,
            dest_url: safe_url(dest_url),
            title,
            id: CowStr::Borrowed(""),
        }),
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        e => e,
    }
}

fn shifted(level: HeadingLevel, offset: usize) -> HeadingLevel {
    let n = (level as usize + offset).min(6);
    HeadingLevel::try_from(n).unwrap_or(HeadingLevel::H6)
}

/// A destination with a scheme other than http, https or mailto becomes `#`.
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let scheme = url
        .split_once(':')
        .map(|(s, _)| s)
        .filter(|s| !s.contains(['/', '?', '#']));
    match scheme.map(str::to_ascii_lowercase).as_deref() {
        None | Some("http" | "https" | "mailto") => url,
        Some(_) => CowStr::Borrowed("#"),
    }
}

#[cfg(test)]
mod tests {
    use super::to_html;

    #[test]
    fn raw_html_shows_as_text() {
        let html = to_html("a <script>alert(1)</script> b\n\n<div onclick=x>\n", 0);
        assert!(
            !html.contains("<script") && !html.contains("<div"),
            "{html}"
        );
    }

    #[test]
    fn images_become_links_and_load_nothing() {
        let html = to_html("![the plot](http://example.org/p.png)", 0);
        assert_eq!(
            html,
            "<p><a href=\"http://example.org/p.png\">the plot</a></p>\n"
        );
    }

    #[test]
    fn script_links_lose_their_destination() {
        let html = to_html("[x](javascript:alert(1)) [y](JavaScript:alert(2))", 0);
        assert!(!html.to_ascii_lowercase().contains("javascript"), "{html}");
    }

    #[test]
    fn headings_move_under_the_page_headings() {
        assert_eq!(
            to_html("# v11\n\n## Outcome\n", 3),
            "<h4>v11</h4>\n<h5>Outcome</h5>\n"
        );
    }
}
