// swift-tools-version:6.0
import PackageDescription

// The command-line tools, in a package of their own so that a package depending
// on the Cabinet library fetches and builds neither GRDB nor swift-argument-parser:
//
//   cabinet     look after a store: info, verify, backup, restore, copy, compact, reindex
//   speedtest   Cabinet against GRDB, raw Tokyo Cabinet and Redis (BENCHMARKS.md)
//   poolbench   what one small StorePool write block costs
//
// `make install PREFIX=/usr/local` installs `cabinet`; `make speedtest` runs the speed test.
// The speed test's Cabinet classes are @StoredModel classes, as an app writes them, so
// this package also depends on the macro's package (Model/, and through it swift-syntax).
let package = Package(
    name: "CabinetTools",
    products: [
        .executable(name: "cabinet", targets: ["CabinetTool"]),
        .executable(name: "speedtest", targets: ["speedtest"]),
        .executable(name: "poolbench", targets: ["poolbench"]),
    ],
    dependencies: [
        .package(name: "Cabinet", path: ".."),
        .package(name: "CabinetModel", path: "../Model"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // The progress bar of `cabinet` and `speedtest`: no dependencies, so both share it.
        .target(name: "TerminalProgress", path: "TerminalProgress"),
        .target(
            name: "SpeedTestKit",
            dependencies: [
                .product(name: "Cabinet", package: "Cabinet"),
                // The raw engines' storage pieces (CRC32, TokyoCabinetYields): not part of `import Cabinet`.
                .product(name: "CabinetStorage", package: "Cabinet"),
                .product(name: "CabinetModel", package: "CabinetModel"),
                .product(name: "CabinetRedis", package: "Cabinet"),
                .product(name: "CTokyoCabinet", package: "Cabinet"),
                .product(name: "CHiredis", package: "Cabinet"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "SpeedTestKit"
        ),
        .executableTarget(
            name: "speedtest",
            dependencies: ["SpeedTestKit", "TerminalProgress", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "speedtest"
        ),
        .executableTarget(
            name: "poolbench",
            dependencies: [.product(name: "Cabinet", package: "Cabinet"), .product(name: "GRDB", package: "GRDB.swift")],
            path: "poolbench"
        ),
        .executableTarget(
            name: "CabinetTool",
            dependencies: [
                .product(name: "Cabinet", package: "Cabinet"),
                .product(name: "CabinetRedis", package: "Cabinet"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "TerminalProgress",
            ],
            path: "cabinet"
        ),
        .testTarget(
            name: "SpeedTestKitTests",
            dependencies: ["SpeedTestKit"],
            path: "Tests/SpeedTestKitTests"
        ),
        .testTarget(
            name: "TerminalProgressTests",
            dependencies: ["TerminalProgress"],
            path: "Tests/TerminalProgressTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
