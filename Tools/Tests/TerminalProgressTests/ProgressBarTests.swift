import Testing
@testable import TerminalProgress

/// The bar's text: counts grouped by thousands, the rate and what is left, and
/// nothing drawn when the output is no terminal.
@Suite struct ProgressBarTests {
    @Test func aLineShowsTheBarTheCountsTheRateAndWhatIsLeft() {
        let line = ProgressBar.line("verify Song", completed: 41_200, total: 100_000, elapsed: 4)
        #expect(line == "verify Song  [############------------------]  41,200/100,000  10,300/s  ETA 6s")
        #expect(ProgressBar.line("copy", completed: 10, total: nil, elapsed: 2) == "copy  10  5/s")
        #expect(ProgressBar.line("done", completed: 5, total: 5, elapsed: 1).hasPrefix("done  [" + String(repeating: "#", count: 30) + "]  5/5"))
        #expect(ProgressBar.line("runs", completed: 3, total: 12, elapsed: 125, style: .elapsed) == "runs  [#######-----------------------]  3/12  2m05s")
    }

    @Test func aLineFitsTheTerminalByShorteningWhatItNames() {
        let what = "simple-insert × cabinet-redis, run 1 of 3"
        let full = ProgressBar.line(what, completed: 3, total: 12, elapsed: 5, style: .elapsed)
        #expect(ProgressBar.line(what, completed: 3, total: 12, elapsed: 5, style: .elapsed, width: 200) == full)
        let narrow = ProgressBar.line(what, completed: 3, total: 12, elapsed: 5, style: .elapsed, width: 60)
        #expect(narrow.count < 60 && narrow.hasPrefix("simple-insert") && narrow.contains("…") && narrow.hasSuffix("3/12  5s"))
        #expect(ProgressBar.line(what, completed: 3, total: 12, elapsed: 5, style: .elapsed, width: 20).count < 20)
    }

    @Test func numbersAndDurationsReadTheSameEverywhere() {
        #expect(ProgressBar.grouped(0) == "0" && ProgressBar.grouped(999) == "999" && ProgressBar.grouped(1_000) == "1,000")
        #expect(ProgressBar.grouped(1_234_567) == "1,234,567" && ProgressBar.grouped(-12_345) == "-12,345")
        #expect(ProgressBar.duration(4.2) == "5s" && ProgressBar.duration(59) == "59s" && ProgressBar.duration(3_700) == "1h01m")
    }

    @Test func nothingIsDrawnWhenQuiet() {
        let bar = ProgressBar(quiet: true)
        #expect(!bar.isEnabled)
        bar.update("verify", completed: 1, total: 2)    // would write to the terminal if enabled
        bar.finish()
    }
}
