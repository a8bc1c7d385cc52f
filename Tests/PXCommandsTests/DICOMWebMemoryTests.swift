import Foundation
import PXTestSupport
import Testing

/// Issue 34: a WADO-RS retrieval keeps what an instance needs only until it is placed, so px-get's and
/// px-sync's peak memory does not grow with the number of instances (it did by about the size of each CT
/// image: the prefix parsed for the header stayed alive in every retained header).
@Suite(
    "WADO-RS memory against Orthanc's DICOMweb", .tags(.integration), .integrationTier, .serialized,
    OrthancCommandPeer(dicomWeb: true), .timeLimit(.minutes(5)))
struct DICOMWebMemoryTests {
    /// The smaller study; the larger holds five times as many (512x512 16-bit CT images, ~0.5 MB each).
    static let small = 24

    /// Writes two studies of `small` and `5 * small` CT images (make-qr-corpus.py --ct-bench, then new UIDs
    /// for each study's copies) under `directory`, one folder per size, and each study's UID in `SIZE.study`.
    static let makeStudies = """
        import glob, os, subprocess, sys, pydicom
        from pydicom.uid import generate_uid
        script, out, sizes = sys.argv[1], sys.argv[2], [int(n) for n in sys.argv[3:]]
        subprocess.run([sys.executable, script, "--ct-bench", str(max(sizes)), out + "/ct"], check=True,
                       stdout=subprocess.DEVNULL)
        files = sorted(glob.glob(out + "/ct/*.dcm"))
        for n in sizes:
            os.makedirs(f"{out}/{n}")
            study, series = generate_uid(), generate_uid()
            for path in files[:n]:
                ds = pydicom.dcmread(path)
                ds.StudyInstanceUID, ds.SeriesInstanceUID = study, series
                ds.SOPInstanceUID = ds.file_meta.MediaStorageSOPInstanceUID = generate_uid()
                ds.save_as(f"{out}/{n}/{os.path.basename(path)}", enforce_file_format=True)
            with open(f"{out}/{n}.study", "w") as f:
                f.write(study)
        for path in files:
            os.remove(path)
        """

    /// Runs a command, then prints getrusage(RUSAGE_CHILDREN).ru_maxrss (its peak RSS, KiB) as the last line.
    static let measure =
        "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)"

    static func dicomFiles(under root: String) -> Int {
        let walker = FileManager.default.enumerator(atPath: root)
        var count = 0
        while let name = walker?.nextObject() as? String {
            if name.hasSuffix(".dcm") { count += 1 }
        }
        return count
    }

    @Test("px-get and px-sync (DICOMweb -> folder) of 5N instances peak under 1.5x their peak for N")
    func peakDoesNotGrowWithInstanceCount() async throws {
        let context = try #require(OrthancCommandPeer.current, "the suite's Orthanc is not running")
        let python = ProcessInfo.processInfo.environment["PX_VENV"].map { $0 + "/bin/python" } ?? TestSupport.python
        let corpus = context.work + "/memory-corpus"
        let sizes = [Self.small, 5 * Self.small]
        let made = try await PeerHarness.runAsync(
            python,
            ["-c", Self.makeStudies, TestSupport.repositoryRoot + "/scripts/make-qr-corpus.py", corpus]
                + sizes.map(String.init))
        try #require(made.exitCode == 0, "\(made.stderr)")
        let load = try await PeerHarness.runAsync(
            "/usr/bin/env",
            [
                "storescu", "-aet", OrthancCommandPeer.callingAETitle, "-aec", OrthancCommandPeer.orthancAETitle,
                "+sd", "127.0.0.1", String(context.dicomPort),
            ] + sizes.map { "\(corpus)/\($0)" })
        try #require(load.exitCode == 0, "storescu: \(load.stderr)")
        let url = "http://127.0.0.1:\(context.httpPort)/dicom-web"
        var peaks: [String: [Int: Int]] = [:]
        for tool in ["px-get", "px-sync"] {
            for size in sizes {
                let study = try String(contentsOfFile: "\(corpus)/\(size).study", encoding: .utf8)
                let out = "\(context.work)/memory-\(tool)-\(size)"
                let arguments =
                    tool == "px-get"
                    ? [url, "--StudyInstanceUID", study, "-d", out] : [url, out, "--StudyInstanceUID", study]
                let run = try await PeerHarness.runAsync(
                    python, ["-c", Self.measure, TestSupport.binDirectory + "/" + tool] + arguments)
                #expect(run.exitCode == 0, "\(tool) of \(size) instances: \(run.stdout) \(run.stderr)")
                #expect(Self.dicomFiles(under: out) == size, "\(tool) of \(size) instances")
                peaks[tool, default: [:]][size] = try #require(
                    run.stdout.split(separator: "\n").last.flatMap { Int($0) }, "\(run.stdout)")
                try? FileManager.default.removeItem(atPath: out)
            }
        }
        for (tool, peak) in peaks {
            let (small, large) = (peak[sizes[0]] ?? 0, peak[sizes[1]] ?? 0)
            #expect(
                large * 2 < small * 3,
                "\(tool): peak RSS \(large) KiB for \(sizes[1]) instances, \(small) KiB for \(sizes[0])")
        }
    }
}
