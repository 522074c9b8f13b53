// swift-tools-version:6.0
import PackageDescription

// An app's package that uses the @StoredModel macro (a checkout of Cabinet
// beside the app, in ../cabinet; the macro's package is its Model folder).
// Run it: copy this folder beside a checkout named cabinet, then `swift run`.
// `Tools/check-package-graph.sh` resolves it and checks that SwiftPM fetched
// swift-log and swift-syntax, and nothing the macro's tests use.
let package = Package(
    name: "ModelApp",
    dependencies: [.package(name: "CabinetModel", path: "../cabinet/Model")],
    targets: [.executableTarget(name: "App", dependencies: [.product(name: "CabinetModel", package: "CabinetModel")])]
)
