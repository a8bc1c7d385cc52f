import DICOMData

#if canImport(Glibc)
    import Glibc
#endif

/// Data-layer benchmark: full parse and header-only read of every file in a folder, repeated,
/// reporting the median of the runs. Used by `make bench` (scripts/bench-data-layer.sh).
@main
struct PXBench {
    static func main() throws {
        let args = CommandLine.arguments
        guard args.count >= 2 else {
            FileHandleOut.write("usage: px-bench DIR [RUNS]\n", to: 2)
            exit(64)
        }
        let dir = args[1]
        let runs = args.count > 2 ? Int(args[2]) ?? 11 : 11
        let files = try listFiles(dir)
        var totalBytes = 0
        for f in files { totalBytes += try Part10File(contentsOf: f).dataSet[.pixelData]?.valueLength ?? 0 }

        let clock = ContinuousClock()
        var full: [Double] = []
        var headers: [Double] = []
        var fileBytes = 0
        for _ in 0..<runs {
            fileBytes = 0
            let t0 = clock.now
            for f in files {
                let file = try Part10File(contentsOf: f)
                fileBytes += file.dataSet[.pixelData]?.valueLength ?? 0
            }
            full.append(seconds(clock.now - t0))
            let t1 = clock.now
            var count = 0
            for f in files {
                let header = try Part10File.readHeader(contentsOf: f)
                count += header.dataSet.count
            }
            headers.append(seconds(clock.now - t1))
            precondition(count > 0 && fileBytes == totalBytes)
        }
        let fullMedian = median(full)
        let headerMedian = median(headers)
        let onDisk = files.reduce(0) { $0 + fileSize($1) }
        let line = """
            {"files": \(files.count), "bytes": \(onDisk), "runs": \(runs), \
            "full_parse_ms": \(ms(fullMedian)), "full_parse_MBps": \(Int(Double(onDisk) / fullMedian / 1e6)), \
            "header_only_ms": \(ms(headerMedian))}

            """
        FileHandleOut.write(line, to: 1)
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
    static func ms(_ s: Double) -> String { String(Double(Int(s * 1e5)) / 100) }
    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func listFiles(_ dir: String) throws -> [String] {
        guard let d = opendir(dir) else { throw DICOMDataError.io("cannot open", path: dir, errno: errno) }
        defer { closedir(d) }
        var out: [String] = []
        while let entry = readdir(d) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".dcm") { out.append(dir + "/" + name) }
        }
        return out.sorted()
    }

    static func fileSize(_ path: String) -> Int {
        var s = stat()
        return stat(path, &s) == 0 ? Int(s.st_size) : 0
    }
}

enum FileHandleOut {
    static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }
}
