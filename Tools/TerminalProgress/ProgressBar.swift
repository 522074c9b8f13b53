import Glibc     // Linux, as the rest of Cabinet: isatty, ioctl, signal

/// A one-line progress bar on standard error, for the tools' long commands:
///
///     verify Song  [#########---------------------]  41,200/100,000  12,345/s  ETA 5s
///
/// It draws only when standard error is a terminal and the user did not ask
/// for quiet, so a pipe or a log file gets nothing but the command's own
/// messages. It redraws at most ten times a second (with `\r`, in place) and
/// clears its line at the end, leaving the terminal as it found it.
///
/// ```swift
/// let bar = ProgressBar(quiet: quiet)
/// defer { bar.finish() }
/// try store.compact { bar.update($0.what, completed: $0.completed, total: $0.total) }
/// ```
/// While it is drawn, Ctrl-C clears the line and then ends the process as
/// SIGINT's default action does: the handler only writes to the terminal, so
/// nothing else of the command runs after the interrupt.
public final class ProgressBar {
    /// What follows the counts: a rate and an estimate (records), or the time so far (runs).
    public enum Style: Sendable {
        case rate, elapsed
    }

    /// Whether anything is drawn: standard error is a terminal, and not quiet.
    public let isEnabled: Bool
    private let style: Style
    private let started: Double
    private var lastDrawn = -Double.infinity
    private var drawn = false

    /// A bar on standard error, drawn if it is a terminal and `quiet` is `false`.
    public init(quiet: Bool, style: Style = .rate) {
        isEnabled = !quiet && isatty(STDERR_FILENO) == 1
        self.style = style
        started = ProgressBar.now()
    }

    /// Shows `what` with `completed` of `total` units, unless the last drawing
    /// is less than a tenth of a second old (the end of an operation is drawn
    /// on its next update or not at all: ``finish()`` clears the line).
    public func update(_ what: String, completed: Int, total: Int?) {
        guard isEnabled else { return }
        let now = ProgressBar.now()
        guard now - lastDrawn >= 0.1 else { return }
        lastDrawn = now
        if !drawn {
            drawn = true
            ProgressBar.clearLineOnInterrupt()
        }
        let line = ProgressBar.line(what, completed: completed, total: total, elapsed: now - started, style: style,
                                    width: ProgressBar.terminalColumns())
        emit("\r" + line + "\u{1B}[K")
    }

    /// Clears the bar's line, if it was drawn, and gives Ctrl-C back its default (or ignoring, if it was ignored).
    public func finish() {
        guard drawn else { return }
        drawn = false
        emit("\r\u{1B}[K")
        ProgressBar.restoreInterrupt()
    }

    /// The text of one drawing, without the control characters, shortened to
    /// fit in `width` columns (a line that wraps could not be redrawn in place):
    /// `what` loses its end first.
    public static func line(_ what: String, completed: Int, total: Int?, elapsed: Double, style: Style = .rate,
                            width: Int? = nil) -> String {
        let full = line(what, completed: completed, total: total, elapsed: elapsed, style: style)
        guard let width, full.count >= width else { return full }
        let shorter = String(what.prefix(max(what.count - (full.count - width + 2), 0))) + "…"
        return String(line(shorter, completed: completed, total: total, elapsed: elapsed, style: style).prefix(width - 1))
    }

    private static func line(_ what: String, completed: Int, total: Int?, elapsed: Double, style: Style) -> String {
        var parts = [what]
        if let total, total > 0 {
            let cells = 30
            let filled = min(cells, max(0, completed * cells / total))
            parts.append("[" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled) + "]")
            parts.append("\(grouped(completed))/\(grouped(total))")
        } else {
            parts.append(grouped(completed))
        }
        switch style {
        case .rate:
            guard elapsed > 0 else { break }
            let rate = Double(completed) / elapsed
            parts.append("\(grouped(Int(rate.rounded())))/s")
            if let total, rate > 0, total > completed {
                parts.append("ETA " + duration(Double(total - completed) / rate))
            }
        case .elapsed:
            parts.append(duration(elapsed))
        }
        return parts.joined(separator: "  ")
    }

    /// 1234567 as "1,234,567": the same on every machine, whatever its locale.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }

    /// Seconds as "5s", "3m07s" or "2h05m".
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return "\(whole / 60)m" + twoDigits(whole % 60) + "s" }
        return "\(whole / 3600)h" + twoDigits(whole / 60 % 60) + "m"
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    private func emit(_ text: String) {
        var text = text
        text.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
    }

    /// The terminal's width, if standard error is one that says.
    private static func terminalColumns() -> Int? {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// On Ctrl-C: clear the bar's line, then die of SIGINT as if no handler were
    /// installed, so the shell sees the interrupt and no more of the command runs
    /// (a store operation stops where it is; its writes are all or nothing).
    /// Only async-signal-safe calls: write, signal and raise.
    private static func clearLineOnInterrupt() {
        // A command started with SIGINT ignored (`cabinet … &` in a script) keeps ignoring it.
        let previous = signal(SIGINT) { number in
            let clear: StaticString = "\r\u{1B}[K"
            _ = write(STDERR_FILENO, clear.utf8Start, clear.utf8CodeUnitCount)
            signal(number, SIG_DFL)
            raise(number)
        }
        if isIgnore(previous) { signal(SIGINT, SIG_IGN) }
    }

    /// Gives Ctrl-C back its default, or leaves it ignored if it was.
    private static func restoreInterrupt() {
        if isIgnore(signal(SIGINT, SIG_DFL)) { signal(SIGINT, SIG_IGN) }
    }

    /// Whether a handler `signal` returned is SIG_IGN (C function pointers have no `==`).
    private static func isIgnore(_ handler: __sighandler_t?) -> Bool {
        unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }
}
