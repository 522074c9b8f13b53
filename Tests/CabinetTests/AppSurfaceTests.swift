import AppSurface
import Testing

/// An app that imports only Cabinet (the AppSurface target, which depends on
/// nothing else) can open, save, back up, verify, export, import and catch errors
/// by code; Tools/check-public-api.sh checks what such an app cannot see.
@Suite struct AppSurfaceTests {
    @Test func anAppThatImportsOnlyCabinetRuns() throws {
        let directory = try TemporaryDirectory()
        let seen = try exerciseAppSurface(in: directory.path)
        #expect(seen == [
            "backup reported progress",
            "notes: hello",
            "a second writer is refused",
            "problems: 0",
            "imported: SurfaceNote 2",             // the note and its class's metadata row
            "not a directory",
            "largest value: true",
        ])
    }
}
