// swift-tools-version:6.0
import PackageDescription

// An app's package that depends on Cabinet, as the README shows it (a checkout of
// Cabinet beside the app, in ../cabinet). `Tools/check-package-graph.sh` (run by
// `make test`) resolves it and checks that SwiftPM fetched swift-log and nothing else.
let package = Package(
    name: "App",
    dependencies: [.package(name: "Cabinet", path: "../cabinet")],
    targets: [.executableTarget(name: "App", dependencies: [.product(name: "Cabinet", package: "Cabinet")])]
)
