// Runs the parts of an operation that can fail, reporting each failure on
// standard output for the test to read, and with --retry trying it once more.
import Cabinet
import Foundation

/// A step failed and the run was asked not to retry.
struct StepFailed: Error {}

final class Steps {
    let retry: Bool
    private var armed = false
    init(retry: Bool) { self.retry = retry }

    /// Starts the shim's count here (the child runs with CABINET_KILLPOINT_ARM=wait),
    /// so the points are the operation's own, not those of the setup before it.
    func arm() {
        armed = true
        Steps.call("cabinet_killpoint_arm")
    }

    /// Runs the harness's own reads (the memory checks) uncounted: reading a named
    /// buffer opens its table, which is an open with O_CREAT.
    private func unarmed<R>(_ body: () throws -> R) rethrows -> R {
        guard armed else { return try body() }
        Steps.call("cabinet_killpoint_disarm")
        defer { Steps.call("cabinet_killpoint_arm") }
        return try body()
    }

    private static func call(_ symbol: String) {
        guard let address = dlsym(nil, symbol) else { return }     // not under the shim
        unsafeBitCast(address, to: (@convention(c) () -> Void).self)()
    }

    /// Runs `body`. If it throws, prints `failed NAME: ERROR` (and with `pending`,
    /// whether the store still has unsaved changes), checks that `memory` reads
    /// the same as before, and then with --retry runs `body` again, which must
    /// succeed; without --retry throws ``StepFailed``.
    /// Exit status: 5 the error is not a CabinetError, 6 memory changed or cannot
    /// be read, 7 the retry failed.
    func step(_ name: String, memory: () throws -> [String] = { [] }, pending: (() -> Bool)? = nil,
              _ body: () throws -> Void) throws {
        let before = try unarmed(memory)
        do {
            try body()
            return
        } catch {
            say("failed \(name): \(error)")
            guard error is CabinetError else { quit(5, "not a CabinetError: \(type(of: error))") }
        }
        if let pending { say("pending: \(pending())") }
        do {
            let after = try unarmed(memory)
            if let (expected, found) = firstDifference(before, after) {
                quit(6, "memory changed after the failure: expected \(expected), found \(found)")
            }
        } catch {
            quit(6, "memory cannot be read after the failure: \(error)")
        }
        guard retry else { throw StepFailed() }
        do {
            try body()
        } catch {
            quit(7, "retry failed \(name): \(error)")
        }
        say("retried \(name): ok")
    }
}

/// One line on standard output, unbuffered: the process may be killed next.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func quit(_ status: Int32, _ message: String) -> Never {
    say(message)
    exit(status)
}

/// The first line where two texts differ ("nothing" past the end of one), or nil if equal.
func firstDifference(_ expected: [String], _ found: [String]) -> (String, String)? {
    for index in 0..<max(expected.count, found.count) {
        let a = index < expected.count ? expected[index] : "nothing", b = index < found.count ? found[index] : "nothing"
        if a != b { return (a, b) }
    }
    return nil
}
