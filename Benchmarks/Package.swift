// swift-tools-version:6.0
// logstore-bench: LogStore measured side by side with plain system calls and
// SQLite (through GRDB). A package of its own so that the library's users
// never resolve GRDB; it reaches the parent package by path.
import PackageDescription

let package = Package(
    name: "LogStoreBenchmarks",
    dependencies: [
        .package(name: "LogStore", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // liblz4 and glibc malloc statistics, called directly by the benchmarks.
        .systemLibrary(name: "CBenchSystem", pkgConfig: "liblz4", providers: [.apt(["liblz4-dev"])]),
        .executableTarget(
            name: "logstore-bench",
            dependencies: [
                "CBenchSystem",
                .product(name: "LogStore", package: "LogStore"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // A minimal GRDB program doing the scaling runs' SQLite work, to check the harness against.
        .executableTarget(name: "grdb-standalone", dependencies: [.product(name: "GRDB", package: "GRDB.swift")]),
    ],
    swiftLanguageModes: [.v6]
)
