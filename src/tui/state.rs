//! The explorer's state and the one function that changes it, `update(action)`. No
//! terminal here: tests drive it with actions and read the state back. The explorer's
//! own actions are handled here; `App::act` hands a view's own actions to that view's
//! `act` (each view's state and its actions live in its module under `views/`).

use super::theme::Theme;
use super::views::Scene;
use crate::analysis::{self, Shown};
use crate::model::{Ladder, RunResult};

// Each view's state lives with the view (its module draws it and handles its actions).
use super::action::{Action, Said, View};
use super::ladder_state::LadderState;
use super::views::bottleneck::BottleneckState;
use super::views::compare::CompareState;
use super::views::inspect::InspectState;
use super::views::notes::NotesState;
use super::views::pipeline::PipelineState;
use super::views::roofline::RooflineState;
use super::views::source::SourceState;
use super::views::timeline::TimelineState;

/// What a background job tells the explorer.
#[derive(Debug, Clone)]
pub enum JobEvent {
    /// A step of the job begins.
    Progress {
        current: String,
        done: usize,
        total: usize,
    },
    /// A run result arrived.
    Result {
        ladder: String,
        result: Box<RunResult>,
    },
    /// The job ended; with the ladder reloaded when it wrote new results or profiles.
    Done {
        outcome: Result<String, String>,
        reloaded: Option<Box<Ladder>>,
    },
}

/// Everything `update` handles: the user's actions and the jobs' events.
#[derive(Debug, Clone)]
pub enum Msg {
    Action(Action),
    Job(JobEvent),
}

impl From<Action> for Msg {
    fn from(a: Action) -> Msg {
        Msg::Action(a)
    }
}

impl From<JobEvent> for Msg {
    fn from(e: JobEvent) -> Msg {
        Msg::Job(e)
    }
}

/// Work the event loop must start or stop on behalf of `update`.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    StartJob(JobRequest),
    CancelJob,
    /// Restore the terminal, stop the process (SIGTSTP), take the terminal back when it
    /// continues.
    Suspend,
}

#[derive(Debug, Clone, PartialEq)]
pub struct JobRequest {
    pub kind: JobKind,
    pub ladder: String,
    /// Version ids (`all` for every one).
    pub versions: Vec<String>,
    /// To profile one version again: the command it was profiled with (`profile --
    /// CMD`); without one, the kernel recipe's version is profiled.
    pub command: Option<crate::model::manifest::ProfileCommand>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobKind {
    Run,
    Profile,
}

/// What a running job last reported.
#[derive(Debug, Clone, PartialEq)]
pub struct JobStatus {
    pub kind: JobKind,
    pub current: String,
    pub done: usize,
    pub total: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    Info(String),
    Error(String),
}

impl Status {
    pub fn text(&self) -> &str {
        match self {
            Status::Info(m) | Status::Error(m) => m,
        }
    }
}

/// What a status message is about. It stays while that holds, and `update` drops it once
/// it does not: another ladder, view or version, a search cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusScope {
    /// The explorer as a whole: a job's outcome, a refused job.
    App,
    /// One ladder: the run results shown, a mark.
    Ladder(usize),
    /// One view of one version of one ladder (no further hot spot).
    View {
        view: View,
        ladder: usize,
        version: Option<usize>,
    },
    /// The source view's kept search of one version (match 2 of 128).
    Search {
        ladder: usize,
        version: Option<usize>,
    },
}

pub struct App {
    pub ladders: Vec<LadderState>,
    pub current: usize,
    pub view: View,
    /// Position of the selected version in display order.
    pub selected: usize,
    /// Version (index into the ladder's versions) marked for compare.
    pub marked: Option<usize>,
    /// Each view's own state.
    pub timeline: TimelineState,
    pub compare: CompareState,
    pub roofline: RooflineState,
    pub pipeline: PipelineState,
    pub inspect: InspectState,
    pub source: SourceState,
    pub bottleneck: BottleneckState,
    pub notes: NotesState,
    pub help: bool,
    pub help_scroll: usize,
    /// The full kernel names of the version shown (K), in a popup.
    pub kernel_popup: bool,
    /// The whole status message and the loading warnings (e), in a popup, and how far
    /// it is scrolled.
    pub message: bool,
    pub message_scroll: usize,
    pub status: Option<Status>,
    /// What the status message is about ([`App::say`] sets both).
    pub status_scope: StatusScope,
    pub job: Option<JobStatus>,
    pub quit: bool,
    pub theme: Theme,
    /// Rows of the main area, for paging.
    pub page_rows: usize,
    /// Where jobs look for kernel recipes (`--kernels`).
    pub kernels: std::path::PathBuf,
    /// What loading could not read (a broken ladder, a missing notes file), one line
    /// each: the status line shows them while it has nothing else to say.
    pub load_warnings: Vec<String>,
}

impl App {
    pub fn new(ladders: Vec<LadderState>, theme: Theme) -> App {
        App {
            ladders,
            current: 0,
            view: View::Timeline,
            selected: 0,
            marked: None,
            timeline: TimelineState::default(),
            compare: CompareState::default(),
            roofline: RooflineState::default(),
            pipeline: PipelineState::default(),
            notes: NotesState::default(),
            inspect: InspectState::default(),
            source: SourceState::default(),
            kernel_popup: false,
            message: false,
            message_scroll: 0,
            bottleneck: BottleneckState::default(),
            help: false,
            help_scroll: 0,
            status: None,
            status_scope: StatusScope::App,
            job: None,
            quit: false,
            theme,
            page_rows: 20,
            kernels: crate::recipe::folders::DEFAULT_KERNELS.into(),
            load_warnings: Vec::new(),
        }
    }

    pub fn ladder(&self) -> &LadderState {
        &self.ladders[self.current]
    }

    /// Shows `status` while `scope` holds.
    fn say(&mut self, scope: StatusScope, status: Status) {
        self.status = Some(status);
        self.status_scope = scope;
    }

    /// The scope of what the view shown now says of the selected version.
    fn view_scope(&self) -> StatusScope {
        StatusScope::View {
            view: self.view,
            ladder: self.current,
            version: self.version_index(),
        }
    }

    /// Whether the status message's scope still holds.
    pub fn status_holds(&self) -> bool {
        match self.status_scope {
            StatusScope::App => true,
            StatusScope::Ladder(l) => l == self.current,
            StatusScope::View { .. } => self.status_scope == self.view_scope(),
            StatusScope::Search { ladder, version } => {
                self.view == View::Source
                    && !self.source.search.is_empty()
                    && ladder == self.current
                    && version == self.version_index()
            }
        }
    }

    /// Drops a status message whose scope no longer holds.
    fn drop_stale_status(&mut self) {
        if self.status.is_some() && !self.status_holds() {
            self.status = None;
        }
    }

    /// Index (into the ladder's versions) of the selected version; `None` while the
    /// ladder has no versions yet (a new ladder before its first run).
    pub fn version_index(&self) -> Option<usize> {
        let order = &self.ladder().order;
        order
            .get(self.selected.min(order.len().saturating_sub(1)))
            .copied()
    }

    /// The two versions the compare view shows: the marked one (or else the version the
    /// selected one was built on, its parent; for a baseline the one before it in display
    /// order) against the selected one ([`Scene::compare_pair`]).
    pub fn compare_pair(&self) -> Option<(usize, usize)> {
        self.scene().compare_pair()
    }

    /// The row under the bottleneck view's cursor: a stall reason of the selected
    /// version's table, with its samples.
    pub fn bottleneck_reason(&self) -> Option<(crate::ncu::StallReason, u64)> {
        let i = self.version_index()?;
        let m = self.ladder().analysis.versions[i].matrix.as_ref()?;
        self.bottleneck.reason(m)
    }

    fn view_slot(&self) -> usize {
        View::ALL.iter().position(|v| *v == self.view).unwrap_or(0)
    }

    /// The scroll offset (or, in the source view, the cursor) of a view.
    pub fn scroll_of(&self, v: View) -> usize {
        match v {
            View::Timeline => self.timeline.scroll,
            View::Compare => self.compare.scroll,
            View::Roofline => self.roofline.scroll,
            View::Pipeline => self.pipeline.scroll,
            View::Inspect => self.inspect.scroll,
            View::Source => self.source.cursor,
            View::Bottleneck => self.bottleneck.row,
            View::Notes => self.notes.scroll,
        }
    }

    /// The keymap's contexts that apply now, first first.
    pub fn key_contexts(&self) -> Vec<crate::tui::keymap::Context> {
        use crate::tui::keymap::{Focus, contexts};
        // What is open over the views takes every key while it is (one at a time: none
        // opens another).
        let focus = if self.inspect.editing || self.source.searching {
            Focus::Typing
        } else if self.kernel_popup {
            Focus::KernelName
        } else if self.message {
            Focus::Message
        } else if self.help {
            Focus::Help
        } else {
            Focus::Views
        };
        contexts(focus, self.view, !self.source.search.is_empty())
    }

    /// The selected version's SASS listing ([`Scene::listing`]).
    pub fn listing(&self) -> Option<Result<&crate::ncu::SourceListing, &str>> {
        self.scene().listing()
    }

    /// What the views draw from besides their own state.
    pub fn scene(&self) -> Scene<'_> {
        Scene::new(
            self.ladder(),
            self.current,
            self.selected,
            self.version_index(),
            self.marked,
            self.theme,
        )
    }

    /// Handles a user action or a job's event: the only place the state changes.
    pub fn update(&mut self, msg: impl Into<Msg>) -> Option<Effect> {
        match msg.into() {
            Msg::Action(a) => self.act(a),
            Msg::Job(e) => {
                // A result or a reload changes the analysis the comparison was made from.
                if !matches!(e, JobEvent::Progress { .. }) {
                    self.compare.cache = None;
                }
                self.job_event(e);
                self.settle();
                None
            }
        }
    }

    /// A user action: the explorer's own (quitting, the popups, which view, version,
    /// ladder and run shape are shown, the mark, jobs) handled here, a view's own handed
    /// to that view's `act` (`act_in_view`); then the state settles. (Those that change
    /// nothing to settle return at once: a job asked for or refused, its stop, a suspend,
    /// a shape refused.)
    fn act(&mut self, action: Action) -> Option<Effect> {
        use Action::*;
        match action {
            QuitNow => self.quit = true,
            Quit => self.close_or_quit(),
            ToggleHelp => {
                self.help = !self.help;
                self.help_scroll = 0;
            }
            HelpScroll(d) => self.help_scroll = self.help_scroll.saturating_add_signed(d as isize),
            NextView | PrevView => {
                let i = self.view_slot() as isize + if action == NextView { 1 } else { -1 };
                self.show(View::ALL[i.rem_euclid(View::ALL.len() as isize) as usize]);
            }
            Show(v) => self.show(v),
            PrevVersion => self.select(self.selected.saturating_sub(1)),
            NextVersion => self.select(self.selected + 1),
            SelectVersion(i) => self.select(i),
            // The views' own: each view's act.
            Up | Down | PageUp | PageDown | Top | Bottom => self.act_in_view(action),
            FilterInput(_) | FilterBackspace | FilterEnd | FilterCancel => self.act_in_view(action),
            ToggleSort | NextHot | PrevHot | NextMatch | PrevMatch => self.act_in_view(action),
            FilterStart => {
                self.view = View::Inspect;
                self.status = None;
                self.act_in_view(action);
            }
            SearchStart => {
                self.show(View::Source);
                self.status = None;
                self.act_in_view(action);
            }
            NextShape => {
                let ls = &mut self.ladders[self.current];
                let shapes = ls.ladder.measured_shapes();
                if shapes.len() < 2 {
                    let said = Status::Info(match shapes.first() {
                        Some(s) => format!("{} was run at {s} only", ls.ladder.name),
                        None => format!("{} has no run results", ls.ladder.name),
                    });
                    self.say(StatusScope::Ladder(self.current), said);
                    return None;
                }
                let now = ls.shown.shape(&ls.ladder);
                let at = shapes.iter().position(|s| Some(*s) == now);
                let next = shapes[at.map_or(0, |i| (i + 1) % shapes.len())];
                ls.shown = Shown::at(next);
                ls.analysis = analysis::analyse_ladder(&ls.ladder, ls.shown);
                self.say(
                    StatusScope::Ladder(self.current),
                    Status::Info(format!(
                        "run results at {next} (S: next of {})",
                        shapes.len()
                    )),
                );
            }
            NextLadder => {
                self.current = (self.current + 1) % self.ladders.len();
                self.selected = 0;
                self.marked = None;
                self.timeline.scroll = 0;
                self.compare.scroll = 0;
                self.pipeline.scroll = 0;
                self.reset_version_views();
            }
            Mark => self.mark(),
            ToggleKernel => self.kernel_popup = !self.kernel_popup,
            ToggleMessage => self.toggle_message(),
            MessageScroll(d) => {
                self.message_scroll = self.message_scroll.saturating_add_signed(d as isize)
            }
            Run { all } | Profile { all } => return self.start_job(action, all),
            StopJob => {
                if self.job.is_some() {
                    return Some(Effect::CancelJob);
                }
                self.say(StatusScope::App, Status::Info("nothing is running".into()));
            }
            Resize { rows } => self.page_rows = rows as usize,
            Suspend => return Some(Effect::Suspend),
        }
        self.settle();
        None
    }

    /// What follows every change: the bottleneck view's cursor kept on a row, the
    /// comparison of the pair shown computed, a status message no longer about what is
    /// shown dropped.
    fn settle(&mut self) {
        self.read_shown_traces();
        self.clamp_bottleneck_row();
        self.refresh_compare();
        self.drop_stale_status();
    }

    /// In the pipeline view: the current ladder's traces at the shape shown read, where
    /// they were not yet (loading a ladder only lists them), and the analysis redone with
    /// them. A trace that cannot be read is kept as such: the view says why.
    fn read_shown_traces(&mut self) {
        if self.view != View::Pipeline {
            return;
        }
        let ls = &mut self.ladders[self.current];
        if ls.shown.read_traces(&mut ls.ladder).read > 0 {
            ls.analysis = analysis::analyse_ladder(&ls.ladder, ls.shown);
            self.compare.cache = None;
        }
    }

    /// m: marks the selected version for compare, or unmarks it.
    fn mark(&mut self) {
        // A ladder before its first run has none to mark.
        let Some(v) = self.version_index() else {
            self.say(
                StatusScope::Ladder(self.current),
                Status::Info("this ladder has no versions yet".into()),
            );
            return;
        };
        self.marked = if self.marked == Some(v) {
            None
        } else {
            Some(v)
        };
        let id = &self.ladder().ladder.versions[v].id;
        let said = Status::Info(match self.marked {
            Some(_) => format!("{id} marked: select another version and press c"),
            None => format!("{id} unmarked"),
        });
        self.say(StatusScope::Ladder(self.current), said);
    }

    /// e: shows (or closes) the whole status message and every loading warning; with
    /// neither, says there is none.
    fn toggle_message(&mut self) {
        if !self.message && self.status.is_none() && self.load_warnings.is_empty() {
            self.say(
                StatusScope::App,
                Status::Info("no message: the status line is empty".into()),
            );
        } else {
            self.message = !self.message;
            self.message_scroll = 0;
        }
    }

    /// r, R, p, P: asks for a run or a profile of the selected version (`all`: of the
    /// whole ladder), unless one is in progress or there is nothing it can run.
    fn start_job(&mut self, action: Action, all: bool) -> Option<Effect> {
        if let Some(j) = &self.job {
            let said = Status::Error(format!(
                "a {} is already in progress (x stops it)",
                job_name(j.kind)
            ));
            self.say(StatusScope::App, said);
            return None;
        }
        let kind = if matches!(action, Action::Run { .. }) {
            JobKind::Run
        } else {
            JobKind::Profile
        };
        let l = &self.ladder().ladder;
        let selected = self.version_index().map(|i| &l.versions[i]);
        let v = match selected {
            Some(v) => v,
            None if all => &crate::model::Version::default(),
            None => {
                self.say(
                    StatusScope::App,
                    Status::Error("no version selected: `R` runs the whole kernel ladder".into()),
                );
                return None;
            }
        };
        if !all && v.baseline {
            let said = Status::Error(format!(
                "{} is a baseline: `R` runs the ladder with its baselines",
                v.id
            ));
            self.say(StatusScope::App, said);
            return None;
        }
        let versions = if all {
            vec!["all".to_string()]
        } else {
            vec![v.id.clone()]
        };
        let ladder = l.name.clone();
        let command = (kind == JobKind::Profile && !all)
            .then(|| v.profiled_with.clone())
            .flatten();
        self.job = Some(JobStatus {
            kind,
            current: String::new(),
            done: 0,
            total: 0,
        });
        self.status = None;
        Some(Effect::StartJob(JobRequest {
            kind,
            ladder,
            versions,
            command,
        }))
    }

    /// q or Esc: closes what is open, the innermost first (the help, the kernel names, the
    /// message), then what the view shown keeps (the inspect filter, the source view's
    /// search); with nothing open, quits.
    fn close_or_quit(&mut self) {
        if self.help {
            self.help = false;
        } else if self.kernel_popup {
            self.kernel_popup = false;
        } else if self.message {
            self.message = false;
        } else if !self.close_in_view() {
            self.quit = true;
        }
    }

    /// Clears what the view shown keeps (q or Esc); whether it kept anything.
    fn close_in_view(&mut self) -> bool {
        match self.view {
            View::Inspect => self.inspect.close(),
            View::Source => self.source.close(),
            _ => false,
        }
    }

    /// A view's own action, handed to the view it concerns: what is typed to the search
    /// being typed, else to the inspect filter; the source view's sort, hot spots and
    /// search to it; a move to the view shown. What the view says is said while it holds.
    fn act_in_view(&mut self, action: Action) {
        use Action::*;
        let page = self.page_rows;
        let view = match action {
            FilterInput(_) | FilterBackspace | FilterEnd | FilterCancel
                if self.source.searching =>
            {
                View::Source
            }
            FilterStart | FilterInput(_) | FilterBackspace | FilterEnd | FilterCancel => {
                View::Inspect
            }
            ToggleSort | NextHot | PrevHot | SearchStart | NextMatch | PrevMatch => View::Source,
            _ => self.view,
        };
        match view {
            View::Timeline => self.timeline.act(action, page),
            View::Compare => self.compare.act(action, page),
            View::Roofline => self.roofline.act(action, page),
            View::Pipeline => self.pipeline.act(action, page),
            View::Inspect => self.inspect.act(action, page),
            View::Source => {
                let version = self
                    .version_index()
                    .map(|i| &self.ladders[self.current].ladder.versions[i]);
                match self.source.act(action, version, page) {
                    Said::Nothing => {}
                    Said::OfView(m) => self.say(self.view_scope(), Status::Info(m)),
                    Said::OfSearch(m) => self.say(self.search_scope(), Status::Info(m)),
                }
            }
            View::Bottleneck => self.bottleneck.act(action, page),
            View::Notes => self.notes.act(action, page),
        }
    }

    /// Another view; the filter being typed is kept, no longer typed (a click on a tab
    /// while typing).
    fn show(&mut self, v: View) {
        self.view = v;
        self.help = false;
        if v != View::Inspect {
            self.inspect.editing = false;
        }
        if v != View::Source {
            self.source.searching = false;
        }
    }

    /// The comparison of the compare view's pair, from the cache when it holds that pair.
    pub fn cached_comparison(&self, pair: (usize, usize)) -> Option<&analysis::Comparison> {
        self.compare.cached(self.current, pair)
    }

    /// Computes the compare view's comparison when that view shows a pair not cached.
    fn refresh_compare(&mut self) {
        if self.view != View::Compare {
            return;
        }
        let pair = self.compare_pair();
        self.compare
            .refresh(self.current, &self.ladders[self.current], pair);
    }

    /// Keeps the bottleneck view's cursor on a row of the selected version's table.
    fn clamp_bottleneck_row(&mut self) {
        let rows = self.version_index().and_then(|i| {
            let m = self.ladder().analysis.versions[i].matrix.as_ref()?;
            Some(m.reasons().len())
        });
        self.bottleneck.clamp(rows);
    }

    /// The scope of what a search says: the kept search of the selected version.
    fn search_scope(&self) -> StatusScope {
        StatusScope::Search {
            ladder: self.current,
            version: self.version_index(),
        }
    }

    fn select(&mut self, i: usize) {
        let n = self.ladder().order.len();
        self.selected = i.min(n.saturating_sub(1));
        self.reset_version_views();
    }

    /// Per-version views start from the top for a newly selected version; the inspect
    /// filter stays (it is shown with how to clear it).
    fn reset_version_views(&mut self) {
        self.inspect.scroll = 0;
        self.source.cursor = 0;
        self.bottleneck.row = 0;
        self.notes.scroll = 0;
    }

    fn job_event(&mut self, e: JobEvent) {
        match e {
            JobEvent::Progress {
                current,
                done,
                total,
            } => {
                if let Some(j) = &mut self.job {
                    j.current = current;
                    j.done = done;
                    j.total = total;
                }
            }
            // A run result joins its version and the analysis is redone.
            JobEvent::Result { ladder, result } => {
                let r = *result;
                let Some(ls) = self.ladders.iter_mut().find(|l| l.ladder.name == ladder) else {
                    return;
                };
                if let Some(v) = ls.ladder.versions.iter_mut().find(|v| v.id == r.version) {
                    v.runs
                        .retain(|o| !(o.shape == r.shape && o.regime() == r.regime()));
                    v.runs.push(r);
                    ls.analysis = analysis::analyse_ladder(&ls.ladder, ls.shown);
                }
            }
            JobEvent::Done { outcome, reloaded } => {
                let kind = self.job.take().map(|j| j.kind);
                if let Some(l) = reloaded
                    && let Some(slot) = self.ladders.iter_mut().find(|s| s.ladder.name == l.name)
                {
                    *slot = LadderState::new(*l);
                    self.selected = self.selected.min(slot.order.len().saturating_sub(1));
                }
                let said = match outcome {
                    Ok(msg) => Status::Info(msg),
                    Err(e) => Status::Error(format!(
                        "{} failed: {e}",
                        kind.map(job_name).unwrap_or("job")
                    )),
                };
                self.say(StatusScope::App, said);
            }
        }
    }
}

pub fn job_name(k: JobKind) -> &'static str {
    match k {
        JobKind::Run => "run",
        JobKind::Profile => "profile",
    }
}
